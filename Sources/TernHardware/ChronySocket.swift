import CTernClock
import Foundation
import Logging
import Synchronization
import TernCore

#if canImport(Glibc)
import Glibc
#endif

/// Gives the receiver's trusted times to chronyd through its SOCK refclock (`refclock SOCK PATH` in
/// chrony.conf: chronyd creates the datagram socket at PATH when it starts, Tern sends to it).
///
/// Humble: one unconnected AF_UNIX datagram socket, one `sendto` per sample with MSG_DONTWAIT, so a
/// missing or busy chronyd never holds the fix pipeline, and a restarted chronyd (a new socket at the
/// same path) is reached by the next sample. A failure is logged once per cause, at notice, with its
/// fix; the next sample is the retry.
public final class ChronySocket: TimeSink {
    public let path: String
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var fd: Int32 = -1
        /// The errno last reported (nil: the last send worked, or none failed yet).
        var failing: Int32?
        var sent = 0
        var dropped = 0
    }

    public init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    deinit {
        let fd = state.withLock { $0.fd }
        if fd >= 0 { close(fd) }
    }

    /// Samples chronyd took, and samples dropped (no socket, no permission, chronyd busy).
    public var counts: (sent: Int, dropped: Int) { state.withLock { ($0.sent, $0.dropped) } }

    public func offer(_ sample: ClockSample) {
        let tv = sample.timeval
        state.withLock { state in
            if state.fd < 0 {
                state.fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard state.fd >= 0 else {
                    report(errno, &state)
                    return
                }
            }
            if tern_chrony_send(state.fd, path, tv.seconds, tv.microseconds, sample.offset, 0) == 0 {
                if state.failing != nil {
                    logger.info("chrony takes the receiver's time again", metadata: ["socket": "\(path)"])
                } else if state.sent == 0 {
                    logger.info("giving the receiver's time to chrony", metadata: ["socket": "\(path)"])
                }
                state.failing = nil
                state.sent += 1
            } else {
                report(errno, &state)
            }
        }
    }

    private func report(_ code: Int32, _ state: inout State) {
        state.dropped += 1
        guard state.failing != code else { return }
        state.failing = code
        logger.notice("\(Self.explain(code, path: path))", metadata: ["socket": "\(path)", "errno": "\(code)"])
    }

    /// The cause of a failed send and its fix, for the log.
    public static func explain(_ code: Int32, path: String) -> String {
        let setup = "docs/time.md"
        switch code {
        case ENOENT:
            return "cannot give the receiver's time to chrony: \(path) does not exist (chronyd is not running, or has no "
                + "`refclock SOCK \(path)` line); tracking goes on, Tern retries with every fix. Fix: apt install chrony and "
                + "add /etc/chrony/conf.d/tern.conf (\(setup))"
        case ECONNREFUSED:
            return "cannot give the receiver's time to chrony: nobody reads \(path) (chronyd stopped and left its socket); "
                + "Tern retries with every fix. Fix: systemctl restart chrony"
        case EACCES, EPERM:
            return "cannot give the receiver's time to chrony: no permission to write to \(path) (chronyd creates it "
                + "root-owned); Tern retries with every fix. Fix: the chrony.service drop-in that hands it to group tern (\(setup))"
        case EAGAIN, EWOULDBLOCK, ENOBUFS:
            return "chrony is not reading \(path) fast enough: dropping the receiver's time samples until it does"
        default:
            return "cannot give the receiver's time to chrony at \(path): \(String(cString: strerror(code))); Tern retries with every fix"
        }
    }
}
