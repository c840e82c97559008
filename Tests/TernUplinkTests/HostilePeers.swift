import Testing

/// The hostile-peer suites (`HostileServerTests`, `HostileTLSServerTests`, `HostileBrokerTests`) run
/// one after another, not at once: each starts servers, brokers and forwarders on real sockets that
/// retry as fast as their backoff allows, and all together they crowded the real-time tests sharing
/// the machine's two cores (a TestClock drive, the demo's offline period, the metrics cap).
@Suite(.serialized) enum HostilePeers {}
