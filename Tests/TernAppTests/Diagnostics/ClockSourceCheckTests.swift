import Foundation
import Testing
import TernApp

/// `tern doctor`'s clock lines, from chronyc output captured from Debian's chronyd 4.3 (`chronyc -n -c`).
@Suite struct ClockSourceCheckTests {
    /// chronyd with Tern's SOCK line, fed samples 50 ms late: selected, the clock 49 ms fast.
    static let gpsTracking =
        "47505300,GPS,1,1795857231.648416994,-0.049133021,-0.002241849,0.002241849,0.000,-121.347,1000000.000,0.200000003,4.376842022,4.0,Normal\n"
    static let gpsSources = "#,*,GPS,0,2,37,4,-0.000461010,-0.002702859,0.102699421\n"
    /// chronyd with Tern's SOCK line (no sample yet) and an NTP server on 127.0.0.1, selected.
    static let ntpTracking =
        "7F000001,127.0.0.1,4,1795857203.185988014,-0.000001232,0.000000016,0.000000150,-0.001,0.000,0.014,0.000005890,0.000001283,1.0,Normal\n"
    static let ntpSources = """
        #,?,GPS,0,2,0,4294967295,0.000000000,0.000000000,0.000000000
        ^,*,127.0.0.1,3,0,377,1,0.000000152,0.000000168,0.000003038

        """
    /// chronyd with Tern's SOCK line only, before any sample.
    static let unsynchronisedTracking =
        "00000000,,0,0.000000000,0.000000000,0.000000000,0.000000000,0.000,0.000,0.000,1.000000000,1.000000000,0.0,Not synchronised\n"
    static let unsynchronisedSources = "#,?,GPS,0,2,0,4294967295,0.000000000,0.000000000,0.000000000\n"

    static let socket = "/run/chrony.tern.sock"

    private func makeSUT(
        socket: String? = ClockSourceCheckTests.socket, kernel: Bool = false, tracking: String?, sources: String?,
        socketExists: Bool = true, writable: Bool = true
    ) -> ClockSourceCheck {
        ClockSourceCheck(
            chronySocket: socket, kernelSynchronised: kernel, tracking: tracking, sources: sources,
            isSocket: { _ in socketExists }, isWritable: { _ in writable })
    }

    @Test func trackingCSVGivesTheReferenceAndHowFarTheClockIsAhead() throws {
        let sut = try #require(ChronyTracking(csv: Self.gpsTracking))
        #expect(sut.referenceID == "47505300")
        #expect(sut.reference == "GPS")
        #expect(sut.isSynchronised)
        #expect(abs(sut.systemTimeOffset - 0.049133021) < 1e-9)
    }

    @Test func trackingWithoutAReferenceIsNotSynchronised() throws {
        #expect(try #require(ChronyTracking(csv: Self.unsynchronisedTracking)).isSynchronised == false)
    }

    @Test func sourcesCSVGivesEachSourceWithItsOctalReach() {
        let sut = ChronySource.parse(csv: Self.ntpSources)
        #expect(sut.map(\.name) == ["GPS", "127.0.0.1"])
        #expect(sut.map(\.reach) == [0, 0o377])
        #expect(sut.map(\.isRefclock) == [true, false])
        #expect(sut.map(\.isSelected) == [false, true])
    }

    @Test func chronyFollowingTheReceiverIsNamed() {
        let checks = makeSUT(tracking: Self.gpsTracking, sources: Self.gpsSources).run()
        #expect(checks.first?.status == .ok)
        #expect(checks.first?.detail.hasPrefix("synchronised by chrony to GPS (Tern's receiver through /run/chrony.tern.sock)") == true)
        #expect(checks.first?.detail.contains("+0.049 s") == true)
    }

    @Test func chronyFollowingAnNTPServerNamesTheServer() {
        let checks = makeSUT(tracking: Self.ntpTracking, sources: Self.ntpSources).run()
        #expect(checks.first?.detail.hasPrefix("synchronised by chrony to NTP server 127.0.0.1 (stratum 4)") == true)
    }

    @Test func chronyWithoutASourceYetIsAWarningWithTheFix() {
        let checks = makeSUT(tracking: Self.unsynchronisedTracking, sources: Self.unsynchronisedSources).run()
        #expect(checks.first?.status == .warn)
        #expect(checks.first?.detail.hasPrefix("not synchronised") == true)
    }

    @Test func theRefclockWaitingForItsFirstSampleIsSaidSo() {
        let checks = makeSUT(tracking: Self.unsynchronisedTracking, sources: Self.unsynchronisedSources).run()
        #expect(checks.last?.name == "chrony refclock")
        #expect(checks.last?.status == .ok)
        #expect(checks.last?.detail.contains("no sample yet") == true)
    }

    @Test func aReachedRefclockShowsItsReach() {
        #expect(makeSUT(tracking: Self.gpsTracking, sources: Self.gpsSources).run().last?.detail.hasSuffix("reach 37") == true)
    }

    @Test func aChronydWithoutTheSocketLacksTheRefclockLine() {
        let check = makeSUT(tracking: Self.ntpTracking, sources: "^,*,127.0.0.1,3,0,377,1,0,0,0\n", socketExists: false).run().last
        #expect(check?.status == .fail)
        #expect(check?.detail.contains("refclock SOCK /run/chrony.tern.sock refid GPS") == true)
    }

    @Test func aSocketTernMayNotWriteToIsAFailureNamingTheDropIn() {
        let check = makeSUT(tracking: Self.gpsTracking, sources: Self.gpsSources, writable: false).run().last
        #expect(check?.status == .fail)
        #expect(check?.fix.contains("drop-in") == true)
    }

    @Test func noChronydWithTheSocketConfiguredWarnsOnBothLines() {
        let checks = makeSUT(tracking: nil, sources: nil).run()
        #expect(checks.map(\.status) == [.warn, .warn])
        #expect(checks.last?.fix.contains("apt install chrony") == true)
    }

    @Test func withoutTheSocketConfiguredOnlyTheClockIsChecked() {
        let checks = makeSUT(socket: nil, kernel: true, tracking: nil, sources: nil).run()
        #expect(checks.map(\.name) == ["clock"])
        #expect(checks.first?.status == .ok)
    }
}
