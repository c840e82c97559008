import Foundation

/// The name a board posts under when the config sets no `device`: its host name, unless that is a
/// stock name many boards share (`raspberrypi`, …), then `tern-` and the first 12 hex digits of
/// `/etc/machine-id` (unique per installation, stable across reboots; systemd creates it at first
/// boot). Never a literal every board would share: the server would mix their positions.
public enum DeviceIdentity {
    /// Host names an image ships with: each is shared by every board flashed from it.
    public static let stockHostNames: Set<String> = ["raspberrypi", "localhost", "debian", "ubuntu", "dietpi"]

    public static func name(hostName: String, machineID: String?) -> String {
        let host = hostName.split(separator: ".").first.map(String.init) ?? hostName
        let valid = !host.isEmpty && host.allSatisfy { $0.isLetter || $0.isNumber || "-_".contains($0) }
        if valid && !stockHostNames.contains(host.lowercased()) { return host }
        let id = (machineID ?? "").trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard id.count >= 12, id.allSatisfy(\.isHexDigit) else { return valid ? host : "tern" }
        return "tern-" + id.prefix(12)
    }

    /// This machine's default device name.
    public static func current(machineIDPath: String = "/etc/machine-id") -> String {
        name(hostName: ProcessInfo.processInfo.hostName, machineID: try? String(contentsOfFile: machineIDPath, encoding: .utf8))
    }
}
