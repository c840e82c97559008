import Testing
import TernUplink

/// Sample kernel tables, as read from a Raspberry Pi.
enum RouteSample {
    static let ipv4Header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"
    static let ipv4Default = "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0"
    static let ipv4Subnet = "wlan0\t0001A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0"

    static let ipv6Default = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
        + "fe80000000000000022233fffe445566 00000400 00000001 00000000 00000003    wlan0"
    static let ipv6LinkLocal = "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 "
        + "00000000000000000000000000000000 00000100 00000001 00000000 00000001    wlan0"
    static let ipv6LoopbackReject = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
        + "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo"

    static func table(_ lines: String...) -> String { lines.joined(separator: "\n") + "\n" }
}

@Suite struct RouteTableTests {
    @Test func ipv4TableWithADefaultRouteHasOne() {
        let table = RouteSample.table(RouteSample.ipv4Header, RouteSample.ipv4Default, RouteSample.ipv4Subnet)

        #expect(RouteTable.hasDefaultRoute(ipv4: table))
    }

    @Test func ipv4TableWithOnlyTheLocalSubnetHasNone() {
        let table = RouteSample.table(RouteSample.ipv4Header, RouteSample.ipv4Subnet)

        #expect(!RouteTable.hasDefaultRoute(ipv4: table))
    }

    @Test func ipv4DefaultRouteThatIsDownDoesNotCount() {
        let down = RouteSample.ipv4Default.replacingOccurrences(of: "\t0003\t", with: "\t0002\t")

        #expect(!RouteTable.hasDefaultRoute(ipv4: RouteSample.table(RouteSample.ipv4Header, down)))
    }

    @Test func emptyOrGarbageTablesHaveNone() {
        #expect(!RouteTable.hasDefaultRoute(ipv4: ""))
        #expect(!RouteTable.hasDefaultRoute(ipv6: "not a route table"))
    }

    @Test func ipv6TableWithADefaultRouteHasOne() {
        let table = RouteSample.table(
            RouteSample.ipv6LinkLocal, RouteSample.ipv6Default, RouteSample.ipv6LoopbackReject)

        #expect(RouteTable.hasDefaultRoute(ipv6: table))
    }

    @Test func ipv6LoopbackRejectRouteIsNotADefaultRoute() {
        let table = RouteSample.table(RouteSample.ipv6LinkLocal, RouteSample.ipv6LoopbackReject)

        #expect(!RouteTable.hasDefaultRoute(ipv6: table))
    }
}
