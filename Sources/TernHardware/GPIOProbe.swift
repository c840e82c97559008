import CTernGPIO
import Foundation

/// Looks at a GPIO line without requesting it (`tern doctor`): free, held (by whom), or missing.
public enum GPIOLineProbe {
    public enum Result: Sendable, Hashable {
        case free
        case held(by: String)
        case missingChip
        case missingLine
    }

    public static func probe(chip: String, line: GPIOLine) -> Result {
        var holder = [CChar](repeating: 0, count: 64)
        let (offset, name): (Int32, String?) =
            switch line {
            case let .offset(value): (Int32(value), nil)
            case let .name(value): (-1, value)
            }
        let code = tern_gpio_probe(chip, offset, name, &holder, holder.count)
        switch code {
        case 0: return .free
        case 1: return .held(by: String(decoding: holder.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        case -Int32(TERN_GPIO_LINE.rawValue): return .missingLine
        default: return .missingChip
        }
    }
}
