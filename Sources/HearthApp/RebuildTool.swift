#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthProjections
import HearthStore
import LMDB

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

    public let directory: String
    public var environment = EnvironmentOptions()

    public init(directory: String) { self.directory = directory }

    /// Refuses (`DataDirectoryLockError.held`) while a daemon holds the data directory.
    public func run(progress: (UInt64, UInt64) -> Void = { _, _ in }) throws -> Summary {
        guard access(directory + "/data.mdb", F_OK) == 0 else { throw StoreError.noLedger(directory: directory) }
        let lock = try DataDirectoryLock(directory: directory, holder: "hearth projections rebuild")
        defer { withExtendedLifetime(lock) {} }
        var options = AccountStore.Options()
        options.environment = environment
        let store = try AccountStore(directory: directory, options: options)
        defer { store.close() }
        let maintenance = store.maintenance
        let before = try maintenance.digest()
        let start = ContinuousClock.now
        let events = try maintenance.rebuild(progress: progress)
        let elapsed = seconds(since: start)
        return Summary(events: events, seconds: elapsed, digestBefore: before, digestAfter: try maintenance.digest())
    }
}
