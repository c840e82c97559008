import Testing
import TernCore
import TernSimulation

@Suite struct EnergyMeterTests {
    @Test func hotCycleCostsInrushPlusAcquisition() {
        var sut = EnergyMeter(energy: .mt3339)
        sut.set(.acquiring, at: 0)
        sut.set(.off, at: 1.5)
        // 3.3 V × (40 mA × 1 s + 25 mA × 0.5 s)
        let cycle: Double = sut.cycles.first ?? 0
        #expect(abs(cycle - 173.25) < 1e-6)
    }

    @Test func offCurrentIsTheBackupSupply() {
        var sut = EnergyMeter(energy: .mt3339)
        sut.finish(at: 1000)
        let expected: Double = 3.3 * 0.007 * 1000
        #expect(abs(sut.totalMillijoules - expected) < 1e-9)
        #expect(sut.cycles.isEmpty)
    }

    @Test func trackingIsIntegratedPerState() {
        var sut = EnergyMeter(energy: .ubloxM8)
        sut.set(.acquiring, at: 0)
        sut.set(.tracking, at: 2)
        sut.finish(at: 12)
        #expect(sut.seconds[.tracking] == 10)
        let tracking: Double = sut.millijoules[.tracking] ?? 0
        let expected: Double = 3.0 * 29 * 10
        #expect(abs(tracking - expected) < 1e-9)
        #expect(sut.onSeconds == 12)
    }
}
