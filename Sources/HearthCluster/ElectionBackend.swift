/// What the elector asks of etcd: a lease, and the few key operations an election needs.
/// `EtcdClient` is the one the daemon uses; a test puts a simulated etcd in its place to drive
/// whole elections on a controllable clock (`ElectionClock`).
protocol ElectionBackend: Sendable {
    func grant(ttlSeconds: Int64) async throws(EtcdError) -> EtcdClient.Lease
    /// The TTL the lease was reset to, or `nil` when etcd no longer holds it.
    func keepAlive(_ lease: Int64) async throws(EtcdError) -> Int64?
    func revoke(_ lease: Int64) async throws(EtcdError)
    func get(_ key: String) async throws(EtcdError) -> EtcdClient.KeyValue?
    func put(_ key: String, _ value: [UInt8], lease: Int64?) async throws(EtcdError)
    /// Deletes `key` only while it is the one created at `createRevision`.
    func delete(_ key: String, ifCreatedAt createRevision: Int64) async throws(EtcdError)
    /// Puts `key` only while `guardKey` is the one created at `createRevision`; whether it did.
    func put(_ key: String, _ value: [UInt8], whileKey guardKey: String, createdAt createRevision: Int64) async throws(EtcdError)
        -> Bool
    /// Puts `key` under `lease` only if it does not exist.
    func create(_ key: String, _ value: [UInt8], lease: Int64) async throws(EtcdError) -> EtcdClient.Creation
}

extension EtcdClient: ElectionBackend {}

/// The elector's time: when it sent a renewal, how long it waits. The monotonic clock in the
/// daemon; a test's own clock to run elections faster than real time and exactly as it says.
protocol ElectionClock: Sendable {
    var now: ContinuousClock.Instant { get }
    func sleep(for duration: Duration) async throws
}

/// The monotonic clock, which `WriteAuthority` checks its deadlines against too.
struct MonotonicElectionClock: ElectionClock {
    init() {}
    var now: ContinuousClock.Instant { .now }
    func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
