import CTernBuildInfo
import CTernGPIO
import Foundation
import GRDBSQLite

/// What `tern --version` reports: the release, the commit and date it was built from, and the
/// libraries it runs on (the libgpiod API it was built for differs between Raspberry Pi OS releases).
public enum BuildInfo {
    /// Tern's release. **Update at each release** (with `NMEADecodingContext.buildReferenceDate`).
    public static let version = "0.9.0"
    public static var commit: String { String(cString: tern_build_commit()) }
    public static var date: String { String(cString: tern_build_date()) }
    public static var gpio: String { String(cString: tern_gpio_library_version()) }
    public static var sqlite: String { "SQLite " + String(cString: sqlite3_libversion()) }

    /// `tern 0.9.0 (commit abc1234, built 2026-11-25; libgpiod 1.6.3 (v1 API), SQLite 3.40.1)`.
    public static var summary: String {
        "tern \(version) (commit \(commit), built \(date); \(gpio), \(sqlite))"
    }
}
