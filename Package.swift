// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Tern",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tern", targets: ["tern"]),
    ],
    dependencies: [
        // Every direct dependency pinned exactly: each build gets the same code (see README, "Packaging").
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", exact: "1.1.1"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
    ],
    targets: [
        // Pure domain: fixes, positions, seams (protocols), filter, scheduler and forwarder state machines, geodesy.
        .target(name: "TernCore", swiftSettings: strict),
        // NMEA 0183 framing, sentence decoding and epoch assembly (pure).
        .target(name: "TernNMEA", dependencies: ["TernCore"], swiftSettings: strict),
        // Receiver command sets and drivers: MediaTek/Quectel PMTK, u-blox UBX, chipset detection (pure).
        .target(name: "TernReceivers", dependencies: ["TernCore", "TernNMEA"], swiftSettings: strict),
        // C shim over libgpiod v1 (bookworm) and v2 (trixie).
        .target(name: "CTernGPIO", linkerSettings: [.linkedLibrary("gpiod")]),
        // C shim over adjtimex(2): is the system clock synchronised?
        .target(name: "CTernClock"),
        // C shim over rtnetlink: link and route changes, for connectivity.
        .target(name: "CTernNetlink"),
        // The commit and date a build came from (set with -Xcc -D at build time).
        .target(name: "CTernBuildInfo"),
        // Humble hardware adapters: termios serial port, libgpiod power switch, the NMEA receiver.
        .target(
            name: "TernHardware",
            dependencies: [
                "TernCore", "TernNMEA", "TernReceivers", "CTernGPIO", "CTernClock", "CTernBuildInfo",
                .product(name: "Logging", package: "swift-log"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        // Durable store-and-forward queue in SQLite (GRDB).
        .target(
            name: "TernStore",
            dependencies: [
                "TernCore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Uplinks: Tern's HTTP batches and OwnTracks HTTP (async-http-client), MQTT 3.1.1 (NIO, NIOSSL);
        // connectivity monitoring.
        .target(
            name: "TernUplink",
            dependencies: [
                "TernCore", "CTernNetlink",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // The coordinator and the async shells that run the state machines.
        .target(
            name: "TernGateway",
            dependencies: [
                "TernCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The built-in simulated board: simulated GPS on a PTY, simulated power switch, local collector.
        .target(
            name: "TernSimulation",
            dependencies: [
                "TernCore", "TernNMEA",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Metrics: the daemon's counters in Prometheus' text format, as a node_exporter textfile and on a
        // loopback HTTP port (swift-prometheus, the swift-metrics backend, used through its registry: HELP
        // text for every series and no global MetricsSystem to bootstrap).
        .target(
            name: "TernMetrics",
            dependencies: [
                "TernCore", "TernGateway",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Composition root: configuration, pipeline assembly, the demo.
        .target(
            name: "TernApp",
            dependencies: [
                "TernCore", "TernNMEA", "TernReceivers", "TernHardware", "TernStore", "TernUplink", "TernGateway", "TernSimulation", "TernMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strict),
        // Fakes and fixture builders shared by tests, demo and benchmarks.
        .target(
            name: "TernTesting",
            dependencies: [
                "TernCore",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Benchmarks: executables that print JSON (see README, "Measurements").
        .executableTarget(
            name: "tern-bench",
            dependencies: [
                "TernNMEA", "TernCore", "TernSimulation", "TernHardware", "TernGateway", "TernStore", "TernUplink", "TernTesting",
                "TernApp",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/TernBench", swiftSettings: strict),
        // libFuzzer harness over NMEA framing, decoding and assembly. Built normally it replays inputs;
        // built with -DFUZZING -sanitize=fuzzer it fuzzes (see README, "Fuzzing").
        .executableTarget(
            name: "tern-fuzz-nmea", dependencies: ["TernNMEA", "TernCore"], path: "Sources/TernFuzz", swiftSettings: strict),
        .executableTarget(
            name: "tern",
            dependencies: [
                "TernApp", "TernNMEA", "TernCore", "TernHardware", "TernReceivers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Test-only: a SQLite VFS that simulates a power cut (unsynced writes lost or torn), for the crash harness.
        .target(name: "CTernCrashVFS", path: "Tests/CTernCrashVFS", linkerSettings: [.linkedLibrary("sqlite3")]),
        // Test-only: the crash harness's child process (power cuts through CTernCrashVFS, SIGKILLs mid-upload).
        .executableTarget(
            name: "tern-queue-child",
            dependencies: [
                "TernStore", "TernGateway", "TernUplink", "TernCore", "TernTesting", "CTernCrashVFS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TernQueueChild", swiftSettings: strict),

        .testTarget(name: "TernCoreTests", dependencies: ["TernCore", "TernTesting"], swiftSettings: strict),
        .testTarget(
            name: "TernTestingTests", dependencies: ["TernTesting", .product(name: "Clocks", package: "swift-clocks")],
            swiftSettings: strict),
        .testTarget(
            name: "TernNMEATests", dependencies: ["TernNMEA", "TernCore"], exclude: ["Corpus"], swiftSettings: strict),
        .testTarget(name: "TernReceiversTests", dependencies: ["TernReceivers", "TernNMEA", "TernCore"], swiftSettings: strict),
        .testTarget(
            name: "TernHardwareTests",
            dependencies: ["TernHardware", "TernCore", "TernNMEA", "TernTesting", .product(name: "Clocks", package: "swift-clocks")],
            swiftSettings: strict),
        .testTarget(
            name: "TernStoreTests",
            // tern-queue-child: built before the tests run it; CTernCrashVFS: only to check a queue without
            // checkpointing it (this process never installs the crash VFS); TernSimulation: the collector.
            dependencies: ["TernStore", "TernCore", "TernTesting", "TernSimulation", "CTernCrashVFS", "tern-queue-child"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "TernUplinkTests",
            dependencies: [
                "TernUplink", "TernCore", "TernTesting", "TernSimulation", "TernGateway",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            exclude: ["Vectors"], swiftSettings: strict),
        .testTarget(
            name: "TernGatewayTests",
            dependencies: ["TernGateway", "TernCore", "TernTesting", .product(name: "Clocks", package: "swift-clocks"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .testTarget(
            name: "TernSimulationTests",
            dependencies: ["TernSimulation", "TernCore", "TernNMEA", "TernTesting", .product(name: "Clocks", package: "swift-clocks")],
            exclude: ["Traces"], swiftSettings: strict),
        .testTarget(
            name: "TernMetricsTests",
            dependencies: ["TernMetrics", "TernCore", "TernGateway", "TernTesting", .product(name: "Prometheus", package: "swift-prometheus")],
            swiftSettings: strict),
        .testTarget(
            name: "TernAppTests",
            dependencies: [
                "TernApp", "TernCore", "TernStore", "TernTesting", "TernGateway", "TernHardware", "TernSimulation", "TernUplink", "tern",
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            swiftSettings: strict),
    ]
)
