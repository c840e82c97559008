/// Parses the kernel's routing tables (pure).
public enum RouteTable {
    private static let routeUp: UInt32 = 0x0001
    private static let routeReject: UInt32 = 0x0200

    /// Whether `/proc/net/route` content has an up default route (destination and mask 0).
    public static func hasDefaultRoute(ipv4 contents: String) -> Bool {
        contents.split(separator: "\n").dropFirst().contains { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 8, let flags = UInt32(fields[3], radix: 16) else { return false }
            return fields[0] != "lo" && fields[1] == "00000000" && fields[7] == "00000000"
                && flags & routeUp != 0 && flags & routeReject == 0
        }
    }

    /// Whether `/proc/net/ipv6_route` content has an up default route (::/0), ignoring the
    /// reject routes the kernel keeps on `lo`.
    public static func hasDefaultRoute(ipv6 contents: String) -> Bool {
        contents.split(separator: "\n").contains { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 10, let flags = UInt32(fields[8], radix: 16) else { return false }
            return fields[9] != "lo" && fields[0].allSatisfy { $0 == "0" } && fields[1] == "00"
                && flags & routeUp != 0 && flags & routeReject == 0
        }
    }
}
