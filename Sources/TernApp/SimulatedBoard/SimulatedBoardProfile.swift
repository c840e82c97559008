/// `board/simulated.toml`, the simulated board's profile, built into the binary: what `tern demo`
/// runs (through `TernConfig.parse`, the daemon's own loader) wherever tern is installed.
/// `SimulatedBoardProfileTests` fails when this copy and the file in the repository differ.
public enum SimulatedBoardProfile {
    /// The file this text is a copy of, relative to the repository's root.
    public static let path = "board/simulated.toml"

    public static let text = """
# Tern on the built-in simulated board: no hardware, no server.
#   tern run --config board/simulated.toml
# A simulated GPS module writes NMEA into a PTY that Tern reads with its real serial adapter;
# a local collector on 127.0.0.1 receives the uploads. Ctrl-C stops it cleanly.

device = "tern-sim"
data_dir = "tern-data"          # relative to the working directory
status_file = "tern-data/status.json"   # what `tern status --config board/simulated.toml` reads
control_socket = "tern-data/control.sock" # what `tern nmea tail --config board/simulated.toml` taps
log_level = "info"

[receiver]
kind = "simulated"
speed = 10                      # simulated seconds per real second
seed = 1

[power]
method = "simulated"            # the simulated board's supply switch

# The scheduler and the filter as shipped: every key below is its default (`tern config show
# board/simulated.toml` lists them all). `tern demo` runs exactly this file.
[scheduler]
policy = "adaptive"             # "adaptive" (fixes as often as the motion needs), "fixed" or "always-on"
error_budget_m = 30             # the interpolated track stays within 30 m of the truth
min_interval = "5s"
max_interval = "15m"
# interval = "30s"              # with policy = "fixed": one fix every 30 s (simulated)
acquisition_timeout = "90s"
accuracy_target_m = 15

[filter]
max_accuracy_m = 50
warm_up = "3s"                  # fixes of a power session's first 3 s must be accurate to count
thinning = "budget"             # store what the track needs within the error budget

[uplink]
local_collector = true          # start the built-in collector and upload to it
batch_size = 20
"""
}
