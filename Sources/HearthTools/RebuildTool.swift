import HearthStore

/// `hearth projections rebuild`: refolds every projection from sequence 0 and proves the
/// result equals what was there (the digests before and after).
public struct RebuildTool {
    public struct Summary: Sendable {
        public var events: UInt64
        public var seconds: Double
        public var digestBefore: String
        public var digestAfter: String

        public var eventsPerSecond: Double { Double(events) / max(seconds, 1e-9) }
        public var matches: Bool { digestBefore == digestAfter }
    }

    public let directory: DataDirectory

    public init(directory: DataDirectory) { self.directory = directory }

    /// Refuses (`DataDirectoryLockError.held`) while a daemon holds the data directory, and
    /// (`StoreError.noLedger`) where there is no ledger to rebuild from.
    public func run(progress: (UInt64, UInt64) -> Void = { _, _ in }) throws -> Summary {
        guard directory.holdsLedger else { throw StoreError.noLedger(directory: directory.path) }
        // Opening catches up first, so "before" is the projections a daemon would serve.
        let store = try directory.open(as: "hearth projections rebuild")
        defer { store.close() }
        let maintenance = store.maintenance
        let before = try maintenance.digest()
        let start = ContinuousClock.now
        let events = try maintenance.rebuild(progress: progress)
        let elapsed = seconds(since: start)
        return Summary(events: events, seconds: elapsed, digestBefore: before, digestAfter: try maintenance.digest())
    }
}
