import CTernGPIO
import Synchronization
import TernCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Drives the receiver's supply (a load switch or an EN pin) through one libgpiod output line.
///
/// The line is requested when the switch is created and held until `close()` or deinit, so
/// no other process can drive it meanwhile.
public final class GPIOPowerSwitch: PowerSwitch {
    /// The libgpiod API the shim was compiled against: "v1" or "v2".
    public static let libgpiodAPI: String = String(cString: tern_gpio_api())

    public let chip: String
    public let line: GPIOLine
    private let handle: Mutex<OpaquePointer?>

    /// Requests `line` of `chip` as an output, driven to `initiallyOn` (off by default, the safe state).
    /// - Parameters:
    ///   - chip: "gpiochip0", a path such as "/dev/gpiochip4", a chip number or a chip label.
    ///   - activeLow: the supply is on when the pin is low.
    ///   - consumer: the label other tools (`gpioinfo`) show for the line while it is held.
    public init(
        chip: String, line: GPIOLine, activeLow: Bool = false, initiallyOn: Bool = false,
        consumer: String = "tern"
    ) throws(GPIOError) {
        self.chip = chip
        self.line = line
        var stage: Int32 = 0
        var holder = [CChar](repeating: 0, count: 64)
        let offset: Int32
        let name: String?
        switch line {
        case let .offset(value):
            guard value >= 0, value <= Int(Int32.max) else { throw .noSuchLine(chip: chip, line: line) }
            offset = Int32(value)
            name = nil
        case let .name(value):
            offset = -1
            name = value
        }
        let opened: OpaquePointer? = holder.withUnsafeMutableBufferPointer { buffer in
            tern_gpio_open(
                chip, offset, name, activeLow ? 1 : 0, initiallyOn ? 1 : 0, consumer,
                &stage, buffer.baseAddress, buffer.count)
        }
        let code = errno
        guard let opened else {
            let nul = holder.firstIndex(of: 0) ?? holder.endIndex
            let holderName = String(decoding: holder[..<nul].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw Self.error(stage: OpenStage(stage), errno: code, chip: chip, line: line, holder: holderName)
        }
        handle = Mutex(opened)
    }

    deinit {
        close()
    }

    /// Drives the line: `on` is the active level (high, or low when active-low).
    public func setPower(on: Bool) async throws {
        try set(on: on)
    }

    /// Synchronous form of `setPower(on:)`.
    public func set(on: Bool) throws(GPIOError) {
        try handle.withLock { (handle: inout OpaquePointer?) throws(GPIOError) in
            guard let handle else { throw .closed(chip: chip, line: line) }
            if tern_gpio_set(handle, on ? 1 : 0) != 0 {
                throw .io(chip: chip, line: line, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Releases the line (it keeps its last level; the kernel may reset it). Idempotent.
    public func close() {
        handle.withLock { handle in
            if let open = handle {
                tern_gpio_close(open)
                handle = nil
            }
        }
    }

    /// Where opening a line failed (the shim's `tern_gpio_stage`).
    enum OpenStage: Sendable {
        case chip, line, request

        init(_ stage: Int32) {
            switch UInt32(bitPattern: stage) {
            case TERN_GPIO_CHIP.rawValue: self = .chip
            case TERN_GPIO_LINE.rawValue: self = .line
            default: self = .request
            }
        }
    }

    /// Maps a failed `tern_gpio_open` to the error the operator sees.
    static func error(stage: OpenStage, errno code: Int32, chip: String, line: GPIOLine, holder: String) -> GPIOError {
        switch (stage, code) {
        case (_, EACCES), (_, EPERM):
            .permissionDenied(chip: chip, line: line)
        case (.chip, ENOENT), (.chip, ENODEV):
            .noSuchChip(chip: chip, line: line)
        case (.line, _):
            .noSuchLine(chip: chip, line: line)
        case (.request, EBUSY):
            .busy(chip: chip, line: line, holder: holder)
        default:
            .io(chip: chip, line: line, reason: String(cString: strerror(code)))
        }
    }
}
