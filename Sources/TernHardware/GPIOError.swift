/// Which line of a GPIO chip: by offset, or by the name the device tree gives it.
public enum GPIOLine: Sendable, Hashable, CustomStringConvertible {
    case offset(Int)
    case name(String)

    public var description: String {
        switch self {
        case let .offset(offset): "line \(offset)"
        case let .name(name): "line '\(name)'"
        }
    }
}

/// Why a GPIO line could not be opened or driven; each message says what to do about it.
public enum GPIOError: Error, Equatable, CustomStringConvertible {
    case noSuchChip(chip: String, line: GPIOLine)
    case noSuchLine(chip: String, line: GPIOLine)
    case permissionDenied(chip: String, line: GPIOLine)
    /// `holder` is the consumer label of whoever holds the line, empty when it has none.
    case busy(chip: String, line: GPIOLine, holder: String)
    case closed(chip: String, line: GPIOLine)
    case io(chip: String, line: GPIOLine, reason: String)

    public var description: String {
        switch self {
        case let .noSuchChip(chip, line):
            "no GPIO chip '\(chip)' (wanted for \(line)): list chips with `gpiodetect`; "
                + "on a Pi the header is gpiochip0 (bookworm) or gpiochip4 on Pi 5"
        case let .noSuchLine(chip, line):
            "no \(line) on \(chip): list its lines with `gpioinfo \(chip)`"
        case let .permissionDenied(chip, line):
            "permission denied on \(Self.devicePath(chip)) (for \(line)): add the user to the gpio group"
        case let .busy(chip, line, holder):
            "\(line) on \(chip) is busy: held by "
                + (holder.isEmpty ? "an unnamed consumer" : "'\(holder)'")
                + "; stop it or free the pin (see `gpioinfo \(chip)`), or configure another line"
        case let .closed(chip, line):
            "\(line) on \(chip) is closed"
        case let .io(chip, line, reason):
            "GPIO error on \(line) of \(chip): \(reason)"
        }
    }

    /// The character device a chip designation refers to ("gpiochip0", "0" or a path).
    static func devicePath(_ chip: String) -> String {
        if chip.hasPrefix("/") { return chip }
        if !chip.isEmpty, chip.allSatisfy(\.isASCIIDigit) { return "/dev/gpiochip\(chip)" }
        return "/dev/\(chip)"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
