/// The config of a `tern run` on the simulated board for end-to-end tests: everything it writes in
/// `directory`, the receiver at 20× cycled by the fixed policy every 5 s, then `extra` (sections such
/// as `[uplink]` or `[metrics]`, in TOML).
public func simulatedBoardConfig(device: String, directory: String, logLevel: String = "info", extra: String) -> String {
    """
    device = "\(device)"
    data_dir = "\(directory)"
    status_file = "\(directory)/status.json"
    control_socket = "\(directory)/control.sock"
    log_level = "\(logLevel)"
    [receiver]
    kind = "simulated"
    speed = 20
    [power]
    method = "simulated"
    [scheduler]
    policy = "fixed"
    interval = "5s"
    \(extra)
    """
}
