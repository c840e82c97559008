import Foundation

/// How big the queue may grow, and what gives when it is full.
public struct QueueCapacity: Sendable, Hashable {
    /// What gives when a new position would exceed the capacity.
    public enum Overflow: String, Sendable, Hashable, CaseIterable {
        /// Drop the oldest queued positions (the newest track matters most to a tracker).
        case dropOldest = "drop-oldest"
        /// Drop every other position of the oldest stretch: the old track keeps its coverage at half
        /// the density (repeated, it halves again).
        case thinOldest = "thin-oldest"
        /// Keep what is queued; refuse new positions.
        case rejectNew = "reject-new"
    }

    /// Most positions kept.
    public var maxPositions: Int
    /// Most bytes the queue's pages may use (the database file, not counting free pages).
    public var maxBytes: Int
    /// Positions queued longer than this (by the system clock when they were stored) are dropped;
    /// nil keeps them however old.
    public var maxAge: Duration?
    public var overflow: Overflow

    /// A million positions (about 11 days at 1 Hz, years at one a minute), 256 MiB, no age limit, drop-oldest.
    public init(
        maxPositions: Int = 1_000_000, maxBytes: Int = 256 << 20, maxAge: Duration? = nil,
        overflow: Overflow = .dropOldest
    ) {
        self.maxPositions = maxPositions
        self.maxBytes = maxBytes
        self.maxAge = maxAge
        self.overflow = overflow
    }
}

extension SQLitePositionQueue {
    /// How the queue is kept.
    public struct Options: Sendable, Hashable {
        /// How `synchronous` is set on the writer connection.
        package enum Synchronous: String, Sendable, Hashable {
            /// Every commit is fsynced: a position counts as stored only once it survives a power cut.
            case full = "FULL"
            /// WAL commits are not fsynced. Only for the crash harness, to prove it can see losses.
            case normal = "NORMAL"
        }

        public var capacity: QueueCapacity
        /// A file of this many bytes kept beside the database and deleted when the disk fills, so that
        /// checkpoints and acknowledgements (which need room in the WAL) can run again; re-created when
        /// space returns. 0: none.
        public var ballastBytes: Int
        /// The WAL is truncated to at most this many bytes after a checkpoint.
        public var journalSizeLimit: Int
        /// The page size of a new database (an existing one keeps its own). Every commit appends one WAL
        /// frame (a page and 24 bytes) per page it touched: a stored position touches three (its row's
        /// leaf, the id index's leaf, the sequence counter), so 1 KiB pages write a quarter of what
        /// SQLite's 4 KiB default does (docs/durability.md, "SD card wear"). A row is about 110 bytes.
        public var pageSize: Int
        package var synchronous: Synchronous

        public init(
            capacity: QueueCapacity = QueueCapacity(), ballastBytes: Int = 8 << 20, journalSizeLimit: Int = 4 << 20, pageSize: Int = 1024
        ) {
            self.capacity = capacity
            self.ballastBytes = ballastBytes
            self.journalSizeLimit = journalSizeLimit
            self.pageSize = pageSize
            self.synchronous = .full
        }
    }
}
