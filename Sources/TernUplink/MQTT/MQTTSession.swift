import NIOCore

/// A message to publish (QoS 1, not retained), tagged with the queue sequence of the position it carries.
public struct MQTTOutgoing: Sendable, Hashable {
    public var sequence: Int64
    public var topic: String
    public var payload: [UInt8]

    public init(sequence: Int64, topic: String, payload: [UInt8]) {
        self.sequence = sequence
        self.topic = topic
        self.payload = payload
    }
}

/// The client side of an MQTT session kept across connections (clean session off): the messages sent
/// and not yet acknowledged with their packet ids, the messages waiting for room in the window, and
/// the sequences the broker acknowledged lately (so a batch that repeats them is not sent twice).
/// Pure: owned by `MQTTConnectionStateMachine`.
struct MQTTSession: Sendable, Hashable {
    struct InFlight: Sendable, Hashable {
        var packetID: UInt16
        var message: MQTTOutgoing
    }

    /// Sent and not acknowledged, oldest first: retransmitted with DUP after a reconnect.
    private(set) var inFlight: [InFlight] = []
    /// Not sent yet, oldest first.
    private(set) var pending = CircularBuffer<MQTTOutgoing>()
    /// The sequences in `inFlight` and `pending`.
    private var queued: Set<Int64> = []
    private var nextPacketID: UInt16 = 1
    private var acknowledged: Set<Int64> = []
    private var acknowledgedOrder = CircularBuffer<Int64>()
    /// How many acknowledged sequences are remembered.
    static let acknowledgedMemory = 4096

    /// Whether anything waits to be sent or acknowledged.
    var hasWork: Bool { !inFlight.isEmpty || !pending.isEmpty }

    /// Queues `messages` behind what waits; returns the sequences the broker acknowledged already (they
    /// are not queued). A message already queued or in flight is not queued twice.
    mutating func add(_ messages: [MQTTOutgoing]) -> [Int64] {
        var alreadyAcknowledged: [Int64] = []
        for message in messages {
            if acknowledged.contains(message.sequence) {
                alreadyAcknowledged.append(message.sequence)
            } else if queued.insert(message.sequence).inserted {
                pending.append(message)
            }
        }
        return alreadyAcknowledged
    }

    /// Moves the oldest waiting message into flight under a free packet id, when the window has room.
    mutating func sendNext(window: Int) -> InFlight? {
        guard inFlight.count < window, let message = pending.popFirst() else { return nil }
        let entry = InFlight(packetID: allocatePacketID(), message: message)
        inFlight.append(entry)
        return entry
    }

    /// Ends the flight of `packetID`; returns its sequence, or nil for an id not in flight (a repeat).
    mutating func acknowledge(packetID: UInt16) -> Int64? {
        guard let index = inFlight.firstIndex(where: { $0.packetID == packetID }) else { return nil }
        let sequence = inFlight.remove(at: index).message.sequence
        queued.remove(sequence)
        remember(sequence)
        return sequence
    }

    /// Forgets the messages never sent (their batch has ended; they come back in the next one).
    mutating func dropPending() {
        for message in pending { queued.remove(message.sequence) }
        pending.removeAll()
    }

    private mutating func remember(_ sequence: Int64) {
        guard acknowledged.insert(sequence).inserted else { return }
        acknowledgedOrder.append(sequence)
        if acknowledgedOrder.count > Self.acknowledgedMemory, let oldest = acknowledgedOrder.popFirst() {
            acknowledged.remove(oldest)
        }
    }

    /// The next id in 1...65535 not in flight (the window is far smaller than the id space).
    private mutating func allocatePacketID() -> UInt16 {
        while true {
            let id = nextPacketID
            nextPacketID = id == .max ? 1 : id + 1
            if !inFlight.contains(where: { $0.packetID == id }) { return id }
        }
    }
}
