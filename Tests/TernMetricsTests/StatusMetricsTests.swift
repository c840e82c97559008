import Foundation
import Testing
import TernCore
import TernGateway
@testable import TernMetrics
import TernTesting

@Suite struct StatusMetricsTests {
    private let start = Date(timeIntervalSince1970: 1_795_600_000)

    private func sample(at seconds: TimeInterval = 60, _ change: (inout MetricsSample) -> Void = { _ in }) -> MetricsSample {
        var sample = MetricsSample(now: start.addingTimeInterval(seconds), started: start)
        change(&sample)
        return sample
    }


    @Test func countersFollowTheDaemonsCumulativeCounts() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample { $0.gateway.enqueued = 5 })
        sut.record(sample { $0.gateway.enqueued = 8 })
        #expect(prometheusValue(sut.text(), "tern_positions_enqueued_total") == 8)
    }

    @Test func everySeriesHasHelpAndType() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample())
        let text = sut.text()
        #expect(text.contains("# TYPE tern_positions_uploaded_total counter"))
        #expect(text.contains("# HELP tern_positions_uploaded_total Positions the server confirmed"))
        #expect(text.contains("# TYPE tern_queue_depth gauge") == false, "no depth was read")
    }

    @Test func rejectionsAreCountedByReasonInSnakeCase() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample { $0.gateway.rejections = ["poorAccuracy": 3, "implausibleJump": 1] })
        #expect(prometheusValue(sut.text(), #"tern_fixes_rejected_total{reason="poor_accuracy"}"#) == 3)
        #expect(prometheusValue(sut.text(), #"tern_fixes_rejected_total{reason="implausible_jump"}"#) == 1)
    }

    @Test func uploadFailuresAreCountedByClass() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample { $0.uplink.failures = ["retryable": 4, "permanent": 1] })
        #expect(prometheusValue(sut.text(), #"tern_upload_failures_total{class="retryable"}"#) == 4)
        #expect(prometheusValue(sut.text(), #"tern_upload_failures_total{class="permanent"}"#) == 1)
        #expect(prometheusValue(sut.text(), #"tern_upload_failures_total{class="rejected"}"#) == 0)
    }

    @Test func queueDropsAreCountedByRule() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample {
            $0.gateway.queueDrops = QueueDrops(oldest: 7, expired: 2)
            $0.gateway.droppedUnwritten = 1
        })
        #expect(prometheusValue(sut.text(), #"tern_positions_dropped_total{reason="oldest"}"#) == 7)
        #expect(prometheusValue(sut.text(), #"tern_positions_dropped_total{reason="expired"}"#) == 2)
        #expect(prometheusValue(sut.text(), #"tern_positions_dropped_total{reason="unwritten"}"#) == 1)
    }

    @Test func fixAgeAppearsOnlyOnceThereIsAFix() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample())
        #expect(prometheusValue(sut.text(), "tern_fix_age_seconds") == nil)
        var fix = Fix.fixture()
        fix.time = start.addingTimeInterval(45)
        sut.record(sample(at: 60) { $0.gateway.lastAccepted = fix })
        #expect(prometheusValue(sut.text(), "tern_fix_age_seconds") == 15)
    }

    @Test func queueAgeIsThatOfThePositionWaitingLongest() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample(at: 3600) {
            $0.queueDepth = 12
            $0.queueOldest = start.addingTimeInterval(600)
        })
        #expect(prometheusValue(sut.text(), "tern_queue_depth") == 12)
        #expect(prometheusValue(sut.text(), "tern_queue_oldest_age_seconds") == 3000)
    }

    @Test func theLinkStateIsOneForTheCurrentStateOnly() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample { $0.receiverLink = ReceiverLinkState.silent(seconds: 9).name })
        #expect(prometheusValue(sut.text(), #"tern_receiver_link_state{state="silent"}"#) == 1)
        #expect(prometheusValue(sut.text(), #"tern_receiver_link_state{state="connected"}"#) == 0)
    }

    @Test func receiverOnTimeIsFractionalSeconds() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample { $0.gateway.receiverOnSeconds = 12.5 })
        sut.record(sample { $0.gateway.receiverOnSeconds = 20.25 })
        #expect(prometheusValue(sut.text(), "tern_receiver_on_seconds_total") == 20.25)
    }

    @Test func checksumErrorsComeFromTheSerialLink() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        sut.record(sample { $0.nmea = .init(bytes: 9000, sentences: 120, checksumErrors: 3) })
        #expect(prometheusValue(sut.text(), "tern_nmea_checksum_errors_total") == 3)
        #expect(prometheusValue(sut.text(), "tern_nmea_sentences_total") == 120)
    }

    @Test func buildInfoNamesVersionAndDevice() {
        let sut = StatusMetrics(device: "pi-1", version: "1.0")
        #expect(prometheusValue(sut.text(), #"tern_build_info{version="1.0",device="pi-1"}"#) == 1)
    }
}
