import Foundation
import Logging
import Testing
import TernCore
import TernHardware

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket bound where chronyd would bind its SOCK refclock's, to read what Tern sends.
private final class BoundDatagramSocket {
    let path: String
    let fd: Int32

    init(path: String = NSTemporaryDirectory() + "tern-chrony-\(UUID().uuidString.prefix(8)).sock") throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
    }

    /// The next datagram, without waiting (nil: none).
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count < 0 ? nil : Array(buffer.prefix(count))
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

private func load<T>(_ bytes: [UInt8], at offset: Int, as type: T.Type) -> T {
    bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: type) }
}

@Suite struct ChronySocketTests {
    private let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func aSampleReachesTheSocketAsChronysSockSample() throws {
        let chronyd = try BoundDatagramSocket()
        let sut = ChronySocket(path: chronyd.path, logger: logger)
        let read = Date(timeIntervalSince1970: 1_795_219_200.0625)
        sut.offer(ClockSample(receivedAt: read, utc: Date(timeIntervalSince1970: 1_795_219_200)))
        let datagram = try #require(chronyd.receive())
        // struct sock_sample on LP64: timeval (8 + 8), double offset, int pulse, leap, _pad, magic.
        #expect(datagram.count == 40)
        #expect(load(datagram, at: 0, as: Int64.self) == 1_795_219_200)
        #expect(load(datagram, at: 8, as: Int64.self) == 62_500)
        #expect(load(datagram, at: 16, as: Double.self) == -0.0625)
        #expect(load(datagram, at: 24, as: Int32.self) == 0)
        #expect(load(datagram, at: 28, as: Int32.self) == 0)
        #expect(load(datagram, at: 36, as: UInt32.self) == 0x534f_434b)
        #expect(sut.counts == (1, 0))
    }

    @Test func aMissingSocketDropsTheSampleWithoutBlockingOrThrowing() {
        let sut = ChronySocket(path: NSTemporaryDirectory() + "no-chronyd-\(UUID().uuidString.prefix(8)).sock", logger: logger)
        sut.offer(ClockSample(receivedAt: Date(), utc: Date()))
        sut.offer(ClockSample(receivedAt: Date(), utc: Date()))
        #expect(sut.counts == (0, 2))
    }

    @Test func aChronydStartedLaterIsReachedByTheNextSample() throws {
        let path = NSTemporaryDirectory() + "late-chronyd-\(UUID().uuidString.prefix(8)).sock"
        let sut = ChronySocket(path: path, logger: logger)
        sut.offer(ClockSample(receivedAt: Date(), utc: Date()))
        let chronyd = try BoundDatagramSocket(path: path)
        sut.offer(ClockSample(receivedAt: Date(), utc: Date()))
        #expect(chronyd.receive()?.count == 40)
        #expect(sut.counts == (1, 1))
    }

    @Test func eachCauseOfFailureIsExplainedWithItsFix() {
        let path = "/run/chrony.tern.sock"
        #expect(ChronySocket.explain(ENOENT, path: path).contains("apt install chrony"))
        #expect(ChronySocket.explain(EACCES, path: path).contains("drop-in"))
        #expect(ChronySocket.explain(ECONNREFUSED, path: path).contains("systemctl restart chrony"))
    }
}
