import Foundation

extension GatewayCore {
    /// Everything the decision core runs with, in one value: the daemon derives it from its config
    /// file (`TernConfig.core`), and `tern demo`, `tern simulate`, the benchmarks and the tests build
    /// their cores from it. The couplings between its parts are derived here and nowhere else: the
    /// scheduler asks the filter's warm-up rule before it calls a fix good enough.
    public struct Configuration: Sendable, Hashable {
        /// When the receiver is powered (with the filter's warm-up, see `init`).
        public private(set) var scheduler: FixScheduler.Options
        /// Which fixes are accepted, and which of them stored (thinning).
        public private(set) var filter: StandardLocationFilter.Options
        /// How accepted positions are written together.
        public var commitWindow: GroupCommit.Window
        /// Positions that may wait for a failing store before the oldest are given up.
        public var maxPendingWrites: Int
        /// How often what the scheduler has learnt is saved.
        public var memorySaveInterval: Duration

        public init(
            scheduler: FixScheduler.Options = .shipped, filter: StandardLocationFilter.Options = StandardLocationFilter.Options(),
            commitWindow: GroupCommit.Window = GroupCommit.Window(), maxPendingWrites: Int = GroupCommit.defaultMaxPending,
            memorySaveInterval: Duration = GatewayCore.defaultMemorySaveInterval
        ) {
            self.scheduler = scheduler.askingTheWarmUp(of: filter)
            self.filter = filter
            self.commitWindow = commitWindow
            self.maxPendingWrites = maxPendingWrites
            self.memorySaveInterval = memorySaveInterval
        }

        /// What the daemon ships with (an empty config file).
        public static let shipped = Configuration()
    }

    /// A core running `configuration` with the standard filter.
    public init(configuration: Configuration) {
        self.init(
            scheduler: FixScheduler(options: configuration.scheduler),
            filter: StandardLocationFilter(options: configuration.filter),
            commitWindow: configuration.commitWindow, maxPendingWrites: configuration.maxPendingWrites,
            memorySaveInterval: configuration.memorySaveInterval)
    }
}
