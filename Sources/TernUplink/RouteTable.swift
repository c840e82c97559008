/// Parses the kernel's routing tables (pure).
public enum RouteTable {
    private static let routeUp: UInt32 = 0x0001
    private static let routeReject: UInt32 = 0x0200

    /// Whether `/proc/net/route` content has an up default route (destination and mask 0).
    public static func hasDefaultRoute(ipv4 contents: String) -> Bool { !defaultRouteInterfaces(ipv4: contents).isEmpty }

    /// Whether `/proc/net/ipv6_route` content has an up default route (::/0), ignoring the
    /// reject routes the kernel keeps on `lo`.
    public static func hasDefaultRoute(ipv6 contents: String) -> Bool { !defaultRouteInterfaces(ipv6: contents).isEmpty }

    /// The interfaces of the up IPv4 default routes.
    public static func defaultRouteInterfaces(ipv4 contents: String) -> [String] {
        contents.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 8, let flags = UInt32(fields[3], radix: 16), fields[0] != "lo", fields[1] == "00000000",
                  fields[7] == "00000000", flags & routeUp != 0, flags & routeReject == 0
            else { return nil }
            return String(fields[0])
        }
    }

    /// The interfaces of the up IPv6 default routes.
    public static func defaultRouteInterfaces(ipv6 contents: String) -> [String] {
        contents.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 10, let flags = UInt32(fields[8], radix: 16), fields[9] != "lo",
                  fields[0].allSatisfy({ $0 == "0" }), fields[1] == "00", flags & routeUp != 0, flags & routeReject == 0
            else { return nil }
            return String(fields[9])
        }
    }

    /// Whether an interface in this operational state (`/sys/class/net/IF/operstate`) can carry
    /// traffic: a route whose link lost its carrier stays in the table (IPv4 `linkdown`).
    public static func isUsable(operstate: String) -> Bool {
        !["down", "lowerlayerdown", "notpresent"].contains(operstate.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
