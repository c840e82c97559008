import Foundation
import NIOPosix
import Testing
import TernCore
import TernGateway
import TernSimulation
import TernTesting
@testable import TernUplink

extension HostilePeers {
    /// The forwarder and the MQTT uplink against brokers that misbehave (issue 31), over real sockets:
    /// one that never sends PUBACK, one that acknowledges another packet id, one that hangs up after
    /// CONNACK. While the broker misbehaves nothing leaves the queue; once it behaves, every position
    /// arrives. Each case prints its counts.
    @Suite(.timeLimit(.minutes(2)), .serialized) struct HostileBrokerTests {
        struct Meeting {
            var queued: Int
            var keptDuringSpell: Int
            var storedDuringSpell: Int
            var status: ForwarderStatus
            var drained: Bool
            var arrived: Set<String>
            var ids: Set<String>
        }

        private func meet(_ behaviour: ScriptedBroker.Behaviour, count: Int = 30, label: String) async throws -> Meeting {
            let broker = ScriptedBroker(behaviour)
            try await broker.start()
            let uplink = try MQTTUplink(
                url: broker.url, device: "pi-gps-01", topic: "owntracks/alice/pi-gps-01", username: nil, password: nil, caFile: nil,
                trackerID: nil, timeout: .seconds(2), group: MultiThreadedEventLoopGroup.singleton, logger: UplinkFixture.quiet,
                tuning: .init(keepAlive: .seconds(10), window: 4, connectTimeout: .seconds(1), responseTimeout: .milliseconds(400)))
            let queue = InMemoryPositionQueue()
            let batch = UplinkFixture.batch(1...Int64(count))
            for queued in batch { _ = try await queue.enqueue(queued.position) }
            let sut = Forwarder(
                queue: queue, uplink: uplink, backoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(100), jitter: 0.5),
                batchSize: 10, clock: ContinuousClock(), logger: UplinkFixture.quiet)
            let meeting = await withTaskGroup(of: Meeting?.self) { group in
                group.addTask { await sut.run(); return nil }
                let met = await eventually(within: .seconds(30)) { sut.status().failedAttempts >= 3 || sut.status().blockedReason != nil }
                let status = sut.status()
                let kept = (try? await queue.count()) ?? -1
                let storedDuringSpell = broker.stored.count
                broker.behaviour = .honest
                var drained = false
                if met { drained = await eventually(within: .seconds(30)) { (try? await queue.count()) == 0 } }
                group.cancelAll()
                return Meeting(
                    queued: count, keptDuringSpell: kept, storedDuringSpell: storedDuringSpell, status: status, drained: drained,
                    arrived: Set(broker.stored), ids: Set(batch.map(\.position.id.uuidString)))
            }
            await uplink.shutdown()
            await broker.stop()
            let result = meeting
            print(
                "hostile broker \(label): \(result.queued) queued; during the spell \(result.storedDuringSpell) acknowledged, the queue "
                    + "kept \(result.keptDuringSpell); afterwards \(result.arrived.count) distinct arrived (in all \(broker.connections) "
                    + "connections, \(broker.publishes) PUBLISHes read); last error: \(result.status.lastError ?? "none")")
            return result
        }

        private func expectNothingDeletedThenEverythingArrives(_ meeting: Meeting) {
            #expect(meeting.keptDuringSpell == meeting.queued, "positions left the queue that the broker never acknowledged")
            #expect(meeting.storedDuringSpell == 0)
            #expect(meeting.drained, "the queue did not drain once the broker behaved")
            #expect(meeting.arrived == meeting.ids, "every position arrived once the broker behaved")
        }

        @Test func aBrokerThatNeverSendsPubAckDeletesNothing() async throws {
            let meeting = try await meet(.silentAfterConnAck, label: "no PUBACK")
            expectNothingDeletedThenEverythingArrives(meeting)
            #expect(meeting.status.lastError?.contains("acknowledged none") == true, "\(meeting.status.lastError ?? "")")
        }

        @Test func aPubAckForAnotherPacketIdDeletesNothing() async throws {
            let meeting = try await meet(.pubAckForAnotherPacket, label: "PUBACK for another packet id")
            expectNothingDeletedThenEverythingArrives(meeting)
        }

        @Test func aBrokerThatHangsUpAfterConnAckDeletesNothing() async throws {
            let meeting = try await meet(.disconnectAfterConnAck, label: "hang-up after CONNACK")
            expectNothingDeletedThenEverythingArrives(meeting)
        }
    }
}
