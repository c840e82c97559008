import Foundation
import TernCore
import TernStore
import TernUplink

/// Everything `tern run` needs, validated. Read from TOML with `TernConfig.load(path:)`.
public struct TernConfig: Sendable, Equatable {
    public enum Receiver: Sendable, Equatable {
        /// A real receiver on a UART.
        case serial(device: String, baud: Int)
        /// The built-in simulated board, running `speed` times faster than real time.
        case simulated(speed: Double, seed: UInt64)
    }

    /// How the receiver is put to sleep and woken (`[power] method`).
    public enum Power: Sendable, Equatable {
        /// The receiver is always powered (HATs without a supply switch).
        case none
        /// A GPIO line drives a load switch or the module's enable pin.
        case gpio(chip: String, line: GPIOLineSpec, activeLow: Bool)
        /// Waveshare L76X HAT: STANDBY (high = run) and FORCE_ON lines on one chip.
        case l76x(chip: String, standbyLine: GPIOLineSpec, forceOnLine: GPIOLineSpec, sleep: L76XSleep)
        /// MediaTek/Quectel `$PMTK161,0` standby over the serial port, woken by any byte.
        case pmtkStandby
        /// u-blox RXM-PMREQ backup over the serial port, woken by UART activity.
        case ubxBackup
        /// The simulated board's supply (only with the simulated receiver).
        case simulated
    }

    /// How the L76X sleeps between fixes.
    public enum L76XSleep: String, Sendable, Equatable {
        /// `$PMTK225,4` over the serial port (lowest current); a FORCE_ON pulse wakes it.
        case backup
        /// STANDBY pulled low; pulled high to run.
        case standby
    }

    public enum GPIOLineSpec: Sendable, Equatable {
        case offset(Int)
        case name(String)
    }

    /// How Tern treats the receiver's serial link and identity.
    public struct ReceiverOptions: Sendable, Equatable {
        /// `auto` (detect from what the receiver says) or a driver name: mediatek, quectel, ublox, ublox9, generic.
        public var chipset: String
        /// On a suspected wrong baud rate, scan the common rates and switch.
        public var autobaud: Bool
        /// No byte for this long while powered counts as a silent receiver.
        public var silenceTimeout: Duration
        /// Resolves two-digit years and GPS week rollovers; nil: the build's reference date.
        public var referenceDate: Date?

        public init(chipset: String = "auto", autobaud: Bool = false, silenceTimeout: Duration = .seconds(5), referenceDate: Date? = nil) {
            self.chipset = chipset
            self.autobaud = autobaud
            self.silenceTimeout = silenceTimeout
            self.referenceDate = referenceDate
        }
    }

    public struct Uplink: Sendable, Equatable {
        /// Which server protocol positions are delivered with.
        public enum Wire: String, Sendable, Equatable, CaseIterable {
            /// Tern's own JSON batches (docs/servers.md, "Tern's protocol"): the fastest.
            case tern
            /// Traccar's OsmAnd endpoint (port 5055), one position per request.
            case traccar
            /// OwnTracks Recorder's HTTP endpoint, one location per request.
            case owntracksHTTP = "owntracks-http"
            /// An MQTT broker (OwnTracks topics), QoS 1.
            case mqtt
        }

        public var `protocol` = Wire.tern
        /// Where positions go (`http(s)://…`, `mqtt(s)://host[:port]`); nil with `local_collector` on the simulated board.
        public var url: URL?
        public var token: String?
        public var batchSize: Int
        /// A whole request may take this long.
        public var timeout: Duration
        public var connectTimeout = Duration.seconds(10)
        public var backoff: Backoff
        /// Start the built-in local collector and upload to it (simulated board only).
        public var localCollector: Bool
        /// Basic auth (OwnTracks Recorder) or MQTT credentials.
        public var username: String?
        public var password: String?
        /// MQTT topic; nil: `owntracks/<username or tern>/<device>`.
        public var topic: String?
        /// OwnTracks tracker id (two characters); nil: from the device name.
        public var trackerID: String?
        /// A PEM file of CA certificates to trust instead of the system's.
        public var caFile: String?
        /// `host:port` of an HTTP proxy; nil: `https_proxy` / `http_proxy` from the environment.
        public var proxy: String?
        /// The newest position goes out ahead of a backlog (opt-in: most servers expect strict order).
        public var liveFirst = false
        /// Requests in flight at once for the one-position-per-request protocols.
        public var parallel = 1
        /// Traccar: the OsmAnd query form or Traccar Client's JSON.
        public var traccarFormat = OsmAnd.Format.query
        /// A record the server refuses this many times is quarantined.
        public var maxRecordAttempts = 5

        /// The HTTP settings of the uplink's client.
        public var httpSettings: UplinkHTTPSettings {
            UplinkHTTPSettings(connectTimeout: connectTimeout, readTimeout: timeout, caFile: caFile, proxy: proxy)
        }
    }

    /// `[store]`: how accepted positions are written and how big the queue may grow.
    /// `[store]` but its commit window (in `core`).
    public struct Store: Sendable, Equatable {
        public var capacity = QueueCapacity()

        public init(capacity: QueueCapacity = QueueCapacity()) {
            self.capacity = capacity
        }
    }

    /// A TCP address as written in a config: `127.0.0.1:9464`, `[::1]:9464`.
    public struct HostPort: Sendable, Equatable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// `[metrics]`: where the daemon's Prometheus metrics go (nowhere by default).
    public struct Metrics: Sendable, Equatable {
        /// A node_exporter textfile directory (`tern.prom` is written there), nil: off.
        public var textfileDirectory: String?
        /// `HOST:PORT` to serve `GET /metrics` on, nil: off.
        public var listen: HostPort?
        /// How often the textfile is rewritten: every rewrite puts a new file on the SD card (about 16 KB
        /// with ext4's journal), so once a minute, not at every scrape (docs/durability.md, "SD card wear"); still
        /// within the 120 s of the stale-textfile alert.
        public var interval: Duration = .seconds(60)

        public init(textfileDirectory: String? = nil, listen: HostPort? = nil, interval: Duration = .seconds(60)) {
            self.textfileDirectory = textfileDirectory
            self.listen = listen
            self.interval = interval
        }

        public var isEnabled: Bool { textfileDirectory != nil || listen != nil }
    }

    /// `[time]`: the receiver's time for the system clock (off by default).
    public struct Time: Sendable, Equatable {
        /// chronyd's SOCK refclock socket: Tern sends every trusted fix's UTC there; nil: off.
        public var chronySocket: String?
        /// The PPS device chrony reads beside it (`refclock PPS … lock GPS`); only flash-image.sh's
        /// chrony snippet uses it (Tern itself does not read PPS); nil: none.
        public var pps: String?

        public init(chronySocket: String? = nil, pps: String? = nil) {
            self.chronySocket = chronySocket
            self.pps = pps
        }

        /// Where chronyd's SOCK socket goes: in /run, as gpsd's sockets (chrony.service may write
        /// there, and Debian's AppArmor profile for chronyd allows `/run/chrony.*.sock`), not in
        /// /run/chrony (mode 0700, _chrony: the tern user could not reach it).
        public static let defaultChronySocket = "/run/chrony.tern.sock"
    }

    public var device: String
    public var dataDirectory: String
    /// Where `tern run` publishes its status for `tern status` (tmpfs by default: no flash wear).
    public var statusFile = TernConfig.defaultStatusFile
    /// The daemon's control socket (`tern nmea tail`, `tern receiver send`, `tern status` go through it).
    public var controlSocket = TernConfig.defaultControlSocket
    public var receiver: Receiver
    public var receiverOptions = ReceiverOptions()
    public var power: Power
    /// What the decision core runs with: `[scheduler]` (the fix policy, acquisition timeout, accuracy
    /// target, the receiver's energy profile), `[filter]` and `[store]`'s commit window, coupled in
    /// `GatewayCore.Configuration` (the one place). The daemon, `tern demo` and `tern simulate
    /// --config` build their cores from it.
    public var core: GatewayCore.Configuration
    /// The scheduler's options (asking the filter's warm-up).
    public var scheduler: FixScheduler.Options { core.scheduler }
    public var filter: StandardLocationFilter.Options { core.filter }
    public var uplink: Uplink
    public var store = Store()
    public var metrics = Metrics()
    public var time = Time()
    public var logLevel: String
    /// The secrets file's path when everyone may read it (a warning), else nil.
    public var secretsWorldReadable: String?

    /// systemd's `RuntimeDirectory=tern` (see deploy/tern.service).
    /// Where the package installs the configuration and every command reads it by default.
    public static let defaultPath = "/etc/tern/tern.toml"
    public static let defaultStatusFile = "/run/tern/status.json"
    public static let defaultControlSocket = "/run/tern/control.sock"

    /// Path of the SQLite queue inside the data directory.
    public var queuePath: String { (dataDirectory as NSString).appendingPathComponent("queue.sqlite") }
}
