import Foundation

/// A network namespace joined to this one by a veth pair, for tests and benchmarks of what crosses a
/// network (its inside link starts down): the
/// device side `inside` (in the namespace, 10.X.0.2) and the server side `outside` (here, 10.X.0.1).
/// Needs root and iproute2 (`canCreate` says); everything is removed when released.
public final class NetworkNamespace {
    public let name: String
    public let inside: String
    public let outside: String
    public let insideAddress: String
    public let outsideAddress: String
    public private(set) var created = false

    /// `index` picks the subnet (10.210+index.0.0/24) and the names, so tests can run side by side.
    public init(index: Int) {
        name = "tern-test-\(index)"
        inside = "tnv\(index)i"
        outside = "tnv\(index)o"
        insideAddress = "10.\(210 + index).0.2"
        outsideAddress = "10.\(210 + index).0.1"
        Self.ip(["netns", "del", name])
        Self.ip(["link", "del", outside])
        created = Self.ip(["netns", "add", name]) == 0
            && Self.ip(["link", "add", outside, "type", "veth", "peer", "name", inside]) == 0
            && Self.ip(["link", "set", inside, "netns", name]) == 0
            && Self.ip(["addr", "add", "\(outsideAddress)/24", "dev", outside]) == 0
            && Self.ip(["link", "set", outside, "up"]) == 0
            && Self.ip(["-n", name, "addr", "add", "\(insideAddress)/24", "dev", inside]) == 0
            && Self.ip(["-n", name, "link", "set", "lo", "up"]) == 0
    }

    deinit {
        Self.ip(["netns", "del", name])
        Self.ip(["link", "del", outside])
    }

    /// Brings the device side's link up (with a default route via the server side) or down (the kernel
    /// then drops the route without a message).
    public func setLink(up: Bool) {
        Self.ip(["-n", name, "link", "set", inside, up ? "up" : "down"])
        if up { Self.ip(["-n", name, "route", "replace", "default", "via", outsideAddress]) }
    }

    /// Runs `command` inside the namespace; returns its exit status.
    @discardableResult
    public func run(_ command: [String]) -> Int32 {
        Self.run("/usr/sbin/ip", ["netns", "exec", name] + command)
    }

    /// The arguments that start `command` inside the namespace.
    public func wrap(_ command: [String]) -> (tool: String, arguments: [String]) {
        ("/usr/sbin/ip", ["netns", "exec", name] + command)
    }

    /// Whether namespaces can be made here (root, iproute2, a kernel that allows it).
    public static let canCreate: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") else { return false }
        return NetworkNamespace(index: 39).created
    }()

    @discardableResult
    static func ip(_ arguments: [String]) -> Int32 { run("/usr/sbin/ip", arguments) }

    /// Runs `tool` here (outside the namespace); returns its exit status.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
