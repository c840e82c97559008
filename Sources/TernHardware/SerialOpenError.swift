import Glibc
import TernCore

/// Turns `errno` values from opening and configuring a serial device into actionable errors.
enum SerialOpenError {
    static func cannotOpen(_ path: String, errno code: Int32) -> SerialPortError {
        .cannotOpen(path: path, reason: reason(errno: code))
    }

    static func reason(errno code: Int32) -> String {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            "no such device: check the path (e.g. /dev/serial0) and enable_uart=1 in config.txt"
        case EACCES, EPERM:
            "permission denied: add the user to the dialout group (usermod -aG dialout USER, then log in again)"
        case EBUSY:
            "device busy: another program (gpsd, a serial console) holds it; stop it or remove console=serial0 from cmdline.txt"
        default:
            String(cString: strerror(code))
        }
    }

    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }
}
