import HearthTesting
import Synchronization

@testable import HearthCluster

/// The elector's clock for the simulation: `HearthTesting`'s `ManualClock`, which moves only when
/// the test says, read as monotonic instants. A minute and a half of elections takes a few real
/// seconds, and every wait ends exactly when the test's time reaches it.
final class VirtualClock: ElectionClock {
    private let manual = ManualClock(0)
    let base = ContinuousClock.now

    var elapsed: Duration { .milliseconds(manual.now()) }
    var now: ContinuousClock.Instant { base + elapsed }

    /// Whole milliseconds, rounded up: a wait never ends before its time.
    func sleep(for duration: Duration) async throws {
        let milliseconds = Int64((duration / .milliseconds(1)).rounded(.up))
        try await manual.sleep(until: manual.now() + milliseconds)
    }

    func advance(by step: Duration) { manual.advance(milliseconds: Int64(step / .milliseconds(1))) }

    /// Waits (in real time, briefly) until at least `count` tasks sleep on the clock: the woken
    /// ones have done what they do before their next wait. Gives up after a while, which only
    /// means a slow task sees more of the test's time pass, as on a loaded machine.
    func settle(sleeping count: Int) async {
        for _ in 0..<400 where manual.sleeperCount < count {
            try? await Task.sleep(for: .microseconds(250))
        }
    }
}

/// etcd as an elector sees it: keys with create and mod revisions, and leases that expire in
/// the clock's time (with their keys), as etcd's v3 API does. Nodes reach it through links
/// (`SimulatedEtcd.Link`) that delay, lose or cut their calls as the test says.
final class SimulatedEtcd: Sendable {
    struct Lease {
        var ttl: Int64
        var expiry: Duration
    }

    struct State {
        var revision: Int64 = 1
        var keys: [String: EtcdClient.KeyValue] = [:]
        var leases: [Int64: Lease] = [:]
        var nextLease: Int64 = 7_000
    }

    let clock: VirtualClock
    private let state = Mutex(State())

    init(clock: VirtualClock) { self.clock = clock }

    /// Runs `operation` on etcd as it stands at the clock's time: expired leases, and their
    /// keys, gone first.
    func apply<T>(_ operation: (inout State, Duration) throws(EtcdError) -> T) throws(EtcdError) -> T {
        let now = clock.elapsed
        return try state.withLock { (state) throws(EtcdError) -> T in
            for (id, lease) in state.leases where lease.expiry <= now {
                state.leases[id] = nil
                state.keys = state.keys.filter { $0.value.lease != id }
            }
            return try operation(&state, now)
        }
    }

    /// `key` as etcd holds it now.
    func key(_ key: String) -> EtcdClient.KeyValue? { try? apply { state, _ in state.keys[key] } }

    /// One node's way to etcd: each call travels there and back with a delay drawn from the
    /// link's latency, gives up at the client's timeout (a request that arrives after that is
    /// still applied, as a real one can be), and fails at once-timeout when the node is cut off.
    final class Link: ElectionBackend {
        struct Conditions {
            var cutOff = false
            /// Milliseconds each way.
            var latency = 1...30
        }

        let etcd: SimulatedEtcd
        let timeout: Duration
        let conditions = Mutex(Conditions())
        private let random: Mutex<SplitMix64>

        init(_ etcd: SimulatedEtcd, timeout: Duration, seed: UInt64) {
            self.etcd = etcd
            self.timeout = timeout
            random = Mutex(SplitMix64(seed: seed))
        }

        private func call<T: Sendable>(_ operation: @escaping @Sendable (inout State, Duration) throws(EtcdError) -> T)
            async throws(EtcdError) -> T
        {
            let (cutOff, there, back) = conditions.withLock { conditions in
                random.withLock { random in
                    (
                        conditions.cutOff, Duration.milliseconds(random.next(in: conditions.latency)),
                        Duration.milliseconds(random.next(in: conditions.latency))
                    )
                }
            }
            let clock = etcd.clock
            do {
                if cutOff {
                    try await clock.sleep(for: timeout)
                    throw EtcdError.unreachable("cut off")
                }
                if there >= timeout {
                    // Arrives after the caller gave up: applied all the same.
                    Task { [etcd] in
                        try await clock.sleep(for: there)
                        _ = try? etcd.apply(operation)
                    }
                    try await clock.sleep(for: timeout)
                    throw EtcdError.unreachable("timed out")
                }
                try await clock.sleep(for: there)
                let result = try etcd.apply(operation)
                if there + back >= timeout {
                    try await clock.sleep(for: timeout - there)
                    throw EtcdError.unreachable("the answer came too late")
                }
                try await clock.sleep(for: back)
                return result
            } catch let error as EtcdError {
                throw error
            } catch {
                throw .unreachable("cancelled")
            }
        }

        func grant(ttlSeconds: Int64) async throws(EtcdError) -> EtcdClient.Lease {
            try await call { state, now in
                let id = state.nextLease
                state.nextLease += 1
                state.leases[id] = Lease(ttl: ttlSeconds, expiry: now + .seconds(ttlSeconds))
                return EtcdClient.Lease(id: id, ttl: ttlSeconds)
            }
        }

        func keepAlive(_ lease: Int64) async throws(EtcdError) -> Int64? {
            try await call { state, now in
                guard let ttl = state.leases[lease]?.ttl else { return nil }
                state.leases[lease]?.expiry = now + .seconds(ttl)
                return ttl
            }
        }

        func revoke(_ lease: Int64) async throws(EtcdError) {
            try await call { state, _ in
                state.leases[lease] = nil
                state.keys = state.keys.filter { $0.value.lease != lease }
            }
        }

        func get(_ key: String) async throws(EtcdError) -> EtcdClient.KeyValue? {
            try await call { state, _ in state.keys[key] }
        }

        func put(_ key: String, _ value: [UInt8], lease: Int64?) async throws(EtcdError) {
            try await call { (state, _) throws(EtcdError) in
                if let lease, state.leases[lease] == nil { throw .refused(EtcdClient.leaseNotFound) }
                Self.put(key, value, lease: lease ?? 0, in: &state)
            }
        }

        func delete(_ key: String, ifCreatedAt createRevision: Int64) async throws(EtcdError) {
            try await call { state, _ in
                guard state.keys[key]?.createRevision == createRevision else { return }
                state.keys[key] = nil
                state.revision += 1
            }
        }

        func put(_ key: String, _ value: [UInt8], whileKey guardKey: String, createdAt createRevision: Int64) async throws(EtcdError)
            -> Bool
        {
            try await call { state, _ in
                guard state.keys[guardKey]?.createRevision == createRevision else { return false }
                Self.put(key, value, lease: 0, in: &state)
                return true
            }
        }

        func create(_ key: String, _ value: [UInt8], lease: Int64) async throws(EtcdError) -> EtcdClient.Creation {
            try await call { (state, _) throws(EtcdError) in
                if let holder = state.keys[key] { return .exists(holder) }
                guard state.leases[lease] != nil else { throw .refused(EtcdClient.leaseNotFound) }
                Self.put(key, value, lease: lease, in: &state)
                return .created(revision: state.revision)
            }
        }

        private static func put(_ key: String, _ value: [UInt8], lease: Int64, in state: inout State) {
            state.revision += 1
            let created = state.keys[key]?.createRevision ?? state.revision
            state.keys[key] = EtcdClient.KeyValue(
                key: key, value: value, createRevision: created, modRevision: state.revision, lease: lease)
        }
    }
}

/// A small seeded generator (SplitMix64): a failing seed replays the same faults.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}
