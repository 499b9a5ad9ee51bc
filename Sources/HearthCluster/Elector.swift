import CoreMetrics
import HearthDomain
import HearthStore
import Logging
import ServiceLifecycle

/// Leader election through etcd, Patroni's way: each node holds a lease (its session) and
/// renews it every tick; with no leader key, a node puts one under its lease, create-only, and
/// the one whose put succeeds leads, for the term that is the key's create revision. The leader
/// acknowledges writes only until its `LeaderLease` deadline, which only a renewal moves; past
/// it, the store refuses on its own (`WriteAuthority`), before etcd may expire the lease and let
/// another node win the key. A node whose lease is gone starts a new session as a follower.
///
/// Each term starts with a `SynchronousSet` in etcd, and while it leads the elector keeps it:
/// it adds followers that confirm the leader's head, and replaces one that stopped confirming
/// with another that holds everything; only a node the set names may campaign.
///
/// A clean stop steps down at once: it deletes the key it created and revokes its lease, so
/// another node is elected within a tick instead of a TTL.
public struct Elector: Service {
    let configuration: ClusterConfiguration
    let etcd: any ElectionBackend
    let clock: any ElectionClock
    let store: AccountStore
    public let state: ClusterState
    /// How often the lease is renewed and the leader key looked at.
    let tick: Duration
    /// Waits until the node may take part (its projections caught up); `false`: it is stopping.
    let ready: @Sendable () async -> Bool
    /// Runs, on a task of its own, each time this node becomes leader (the daemon records the
    /// declared projects' settings then, as a single node does at start).
    let onLeadership: @Sendable () async -> Void
    let logger: Logger

    private static let elections = Counter(label: "hearth_cluster_elections_total")
    private static let fencings = Counter(label: "hearth_cluster_fenced_total")
    /// A follower that has not confirmed for this long is not counted on (it asks at least
    /// every second while it follows: `ReplicationSource`'s long poll).
    static let confirmationsLive = Duration.seconds(2)
    /// How far behind the head a follower may be and still be chosen: it catches up within a
    /// batch, while the writes it now must confirm wait.
    static let synchronousSlack: UInt64 = 4_096
    /// How long a follower being added may take to confirm the head before the move is dropped.
    static let catchUpLimit = Duration.seconds(3)
    /// How often a leader looks at its followers' confirmations.
    static let keeping = Duration.milliseconds(100)

    public init(
        configuration: ClusterConfiguration, store: AccountStore, state: ClusterState = ClusterState(),
        startsAfter ready: @escaping @Sendable () async -> Bool = { true }, onLeadership: @escaping @Sendable () async -> Void = {},
        logger: Logger
    ) {
        let tick = Self.tick(configuration)
        self.init(
            configuration: configuration, etcd: EtcdClient(endpoints: configuration.etcd, timeout: tick), clock: MonotonicElectionClock(),
            store: store, state: state, startsAfter: ready, onLeadership: onLeadership, logger: logger)
    }

    /// An elector that reaches etcd through `etcd` and keeps time by `clock` (a test's simulation).
    init(
        configuration: ClusterConfiguration, etcd: any ElectionBackend, clock: any ElectionClock, store: AccountStore,
        state: ClusterState = ClusterState(), startsAfter ready: @escaping @Sendable () async -> Bool = { true },
        onLeadership: @escaping @Sendable () async -> Void = {}, logger: Logger
    ) {
        self.configuration = configuration
        tick = Self.tick(configuration)
        self.etcd = etcd
        self.clock = clock
        self.store = store
        self.state = state
        self.ready = ready
        self.onLeadership = onLeadership
        self.logger = logger
    }

    /// A fifth of the lease, at most a second: five renewals fit in a lease, each call's deadline in one.
    static func tick(_ configuration: ClusterConfiguration) -> Duration {
        min(.seconds(1), .seconds(configuration.leaseSeconds) / 5)
    }

    public func run() async throws {
        store.writeAuthority.follow(nil)
        guard await ready() else { return }
        let session = Session()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await run(session)
                } catch is CancellationError {
                    break
                } catch {
                    state.update { $0.etcdReachable = false }
                    logger.warning("cluster session ended", metadata: ["error": "\(error)"])
                }
                stopLeading(session, fenced: true)
                // The lost session's lease, should etcd still hold it: revoked, it frees the
                // leader key at once rather than at its expiry.
                if let lease = session.lease {
                    session.lease = nil
                    try? await etcd.revoke(lease.id)
                }
                try? await clock.sleep(for: tick)
            }
        }
        await stepDown(session)
    }

    /// What one session holds: its lease, and the term it leads, if any.
    private final class Session: @unchecked Sendable {
        // Only the elector's one task touches these.
        var lease: EtcdClient.Lease?
        var term: Int64?
        var registered: MemberRecord?
        var ticksSinceRegistration = 0
        /// While it leads: the synchronous set etcd holds, and any move under way.
        var keeper: SynchronousSetKeeper?
    }

    /// One lease: granted, then renewed every tick while this node leads or follows; returns
    /// (throws) when the lease is lost or its deadline passed without a renewal.
    private func run(_ session: Session) async throws {
        let sent = clock.now
        let lease = try await etcd.grant(ttlSeconds: configuration.leaseSeconds)
        session.lease = lease
        // A new lease: the registration under the last one went with it.
        session.registered = nil
        let ttl = Duration.seconds(lease.ttl)
        var fence = LeaderLease(ttl: ttl, margin: LeaderLease.margin(for: ttl), grantSentAt: sent)
        state.update { $0.etcdReachable = true }
        while true {
            do {
                try await leadOrFollow(session, lease: lease, until: fence.deadline)
                try await register(session, lease: lease)
                state.update { $0.etcdReachable = true }
            } catch let error as EtcdError {
                guard case .unreachable = error else { throw error }
                state.update { $0.etcdReachable = false }
            }
            try await keepSynchronousSet(session, until: clock.now + tick)
            let renewal = clock.now
            do {
                guard try await etcd.keepAlive(lease.id) != nil else { throw ElectorError.leaseLost }
                fence.renewed(sentAt: renewal)
                if let term = session.term { store.writeAuthority.lead(term: UInt64(term), until: fence.deadline) }
            } catch let error as EtcdError {
                guard case .unreachable = error else { throw error }
                state.update { $0.etcdReachable = false }
                // The store stops acknowledging at the deadline by itself; past it, this session is over.
                guard fence.mayAcknowledge(at: clock.now) else { throw ElectorError.leaseExpired }
            }
        }
    }

    /// Confirms this node still holds the leader key, or, with no leader, campaigns for it.
    private func leadOrFollow(_ session: Session, lease: EtcdClient.Lease, until deadline: ContinuousClock.Instant) async throws {
        let holder = try await etcd.get(configuration.leaderKey)
        if let term = session.term {
            if holder?.createRevision == term { return }
            logger.warning("the leader key is no longer this node's: stepping down", metadata: ["term": "\(term)"])
            stopLeading(session, fenced: true)
        }
        if let holder, holder.lease == lease.id, session.term == nil {
            // This session's own key, its term not begun (etcd failed between the two).
            return try await lead(session, term: holder.createRevision, until: deadline)
        }
        if let holder, holder.lease != lease.id, MemberRecord(holder.value)?.node == configuration.node {
            // This node's own key from a session it lost: no one else may take the key while
            // it stands, and this node is not leading under it.
            try await etcd.delete(configuration.leaderKey, ifCreatedAt: holder.createRevision)
            return try await leadOrFollow(session, lease: lease, until: deadline)
        }
        guard let holder else {
            guard try await mayCampaign() else { return follow(nil) }
            let record = MemberRecord(node: configuration.node, url: configuration.advertiseURL, role: .leader, at: store.clock.now())
            switch try await etcd.create(configuration.leaderKey, record.encoded, lease: lease.id) {
            case .created(let term):
                try await lead(session, term: term, until: deadline)
            case .exists(let holder):
                follow(holder)
            }
            return
        }
        follow(holder)
    }

    /// Whether this node may lead: its projections fold (a term starts only once they reach the
    /// head, so a node whose fold fails would hold the key and write nothing), and it holds every
    /// acknowledged write, as the synchronous set in etcd says.
    private func mayCampaign() async throws -> Bool {
        let foldFailure = (try? store.replication.folding())?.failure
        let previous = state.snapshot.foldFailure
        state.update { $0.foldFailure = foldFailure }
        if let foldFailure {
            if foldFailure != previous {
                logger.error("this node's projections fail to fold: not campaigning", metadata: ["error": "\(foldFailure)"])
            }
            return false
        }
        guard let stored = try await etcd.get(configuration.synchronousKey) else { return true }
        guard let synchronous = SynchronousSet(stored.value) else {
            logger.error("the synchronous set in etcd is unreadable: not campaigning", metadata: ["key": "\(configuration.synchronousKey)"])
            return false
        }
        let may = synchronous.mayLead(configuration.node)
        state.update {
            $0.synchronous = synchronous
            $0.mayLead = may
        }
        return may
    }

    /// Begins term `term`: the synchronous set it starts with recorded in etcd, and the store
    /// told what to wait for, before any write.
    private func lead(_ session: Session, term: Int64, until deadline: ContinuousClock.Instant) async throws {
        let previous = try await etcd.get(configuration.synchronousKey).flatMap { SynchronousSet($0.value) }
        let synchronous = SynchronousSet.starting(
            term: term, leader: configuration.node, after: previous, configured: configuration.synchronousFollowers)
        store.synchronousCommit.timeout = configuration.synchronousTimeout
        store.synchronousCommit.reset(synchronous.requirement)
        guard
            try await etcd.put(
                configuration.synchronousKey, synchronous.encoded, whileKey: configuration.leaderKey, createdAt: term)
        else { throw ElectorError.leaderKeyLost }
        session.keeper = SynchronousSetKeeper(synchronous, catchUpLimit: Self.catchUpLimit)
        state.update {
            $0.synchronous = synchronous
            $0.mayLead = true
        }
        session.term = term
        store.writeAuthority.begin(term: UInt64(term), until: deadline)
        Self.elections.increment()
        // Its writes wait for a synchronous follower, which this task adds: they must not hold
        // it (nor the lease's renewals).
        Task { [self] in
            guard await recordStart(of: UInt64(term)) else { return }
            await onLeadership()
        }
        let leader = MemberRecord(
            node: configuration.node, url: configuration.advertiseURL, role: .leader, term: term, at: store.clock.now())
        state.update {
            $0.role = .leader
            $0.term = term
            $0.leader = leader
            $0.elections += 1
        }
        logger.notice("elected leader", metadata: ["cluster": "\(configuration.name)", "node": "\(configuration.node)", "term": "\(term)"])
    }

    /// Writes `term`'s first record, `cluster.term_started`, while this node leads it: again
    /// until it commits and the synchronous followers hold it. False if the term ended first.
    private func recordStart(of term: UInt64) async -> Bool {
        while true {
            guard case .leader(term, _) = store.writeAuthority.standing else { return false }
            do {
                if let started = try await store.startTerm(term, node: configuration.node) {
                    logger.info("term started", metadata: ["term": "\(term)", "sequence": "\(started.sequence)"])
                }
                return true
            } catch StoreError.notReplicated {
                // Committed here; acknowledged once a follower holds it.
            } catch StoreError.notLeader {
                // Past the fencing deadline for a moment (slow etcd calls at the term's start):
                // the next renewal moves it; the loop ends when the term does.
            } catch {
                logger.error("recording the start of the term failed", metadata: ["term": "\(term)", "error": "\(error)"])
            }
            try? await clock.sleep(for: .seconds(1))
        }
    }

    private func follow(_ holder: EtcdClient.KeyValue?) {
        var leader = holder.flatMap { MemberRecord($0.value) }
        leader?.term = holder?.createRevision
        store.writeAuthority.follow(leader?.node)
        let changed = state.snapshot.leader != leader
        state.update {
            $0.role = .follower
            $0.term = leader?.term ?? $0.term
            $0.leader = leader
        }
        if changed, let leader {
            logger.info("following", metadata: ["leader": "\(leader.node)", "term": "\(leader.term ?? 0)"])
        }
    }

    /// Ends this node's term, if it has one: nothing more is acknowledged.
    private func stopLeading(_ session: Session, fenced: Bool) {
        guard let term = session.term else { return }
        session.term = nil
        session.keeper = nil
        store.writeAuthority.follow(nil)
        // Writes waiting for followers are answered: not acknowledged.
        store.synchronousCommit.reset(.none)
        state.update {
            $0.role = .follower
            $0.leader = nil
            if fenced { $0.fenced += 1 }
        }
        if fenced {
            Self.fencings.increment()
            logger.warning("stopped leading: writes are refused until a leader is known", metadata: ["term": "\(term)"])
        }
    }

    /// Until `deadline` (the next renewal): while this node leads, keeps its synchronous set
    /// every 100 ms, so a new term's first follower joins it, or a lost one is replaced, within
    /// a fraction of a tick. A failed etcd call waits for the next round.
    private func keepSynchronousSet(_ session: Session, until deadline: ContinuousClock.Instant) async throws {
        while true {
            if session.term != nil {
                do {
                    try await keepSynchronousSet(session)
                } catch let error as EtcdError {
                    guard case .unreachable = error else { throw error }
                    state.update { $0.etcdReachable = false }
                }
            }
            let remaining = deadline - clock.now
            guard remaining > .zero else { return }
            try await clock.sleep(for: min(remaining, Self.keeping))
        }
    }

    /// One step of keeping the synchronous set (`SynchronousSetKeeper`), towards the followers
    /// this leader wants (`SynchronousSet.wanted`).
    private func keepSynchronousSet(_ session: Session) async throws {
        guard let term = session.term, var keeper = session.keeper else { return }
        defer { session.keeper = keeper }
        let commit = store.synchronousCommit
        let step = keeper.step(
            confirmations: commit.confirmations, head: try store.ledgerHead().sequence, now: clock.now,
            configured: configuration.synchronousFollowers, live: Self.confirmationsLive, slack: Self.synchronousSlack)
        switch step {
        case .none: return
        case .widen(let requirement):
            commit.require(requirement)
            keeper.widened(head: try store.ledgerHead().sequence)
        case .narrow(let requirement):
            commit.require(requirement)
        case .record(let set):
            let recorded = try await etcd.put(
                configuration.synchronousKey, set.encoded, whileKey: configuration.leaderKey, createdAt: term)
            commit.require(keeper.recorded(recorded))
            guard recorded else { return }
            state.update { $0.synchronous = set }
            logger.notice(
                "synchronous followers", metadata: ["followers": "\(set.followers.joined(separator: ","))", "required": "\(set.required)"])
        }
    }

    /// This node's member key, rewritten when its role or term changes and every few seconds
    /// (its ledger head, for the lag `hearth cluster status` shows).
    private func register(_ session: Session, lease: EtcdClient.Lease) async throws {
        var record = MemberRecord(
            node: configuration.node, url: configuration.advertiseURL, role: session.term == nil ? .follower : .leader,
            term: session.term ?? state.snapshot.term, head: try? store.ledgerHead().sequence, at: store.clock.now())
        if session.term == nil { record.lagMilliseconds = state.snapshot.lagMilliseconds }
        session.ticksSinceRegistration += 1
        if let last = session.registered, last.role == record.role, last.term == record.term, session.ticksSinceRegistration < 5 {
            return
        }
        try await etcd.put(configuration.memberKey, record.encoded, lease: lease.id)
        session.registered = record
        session.ticksSinceRegistration = 0
    }

    /// A clean stop: no more writes, the leader key given up and the lease revoked, so another
    /// node need not wait out the TTL.
    private func stepDown(_ session: Session) async {
        let term = session.term
        stopLeading(session, fenced: false)
        if let term {
            try? await etcd.delete(configuration.leaderKey, ifCreatedAt: term)
            logger.notice("stepped down", metadata: ["term": "\(term)"])
        }
        if let lease = session.lease { try? await etcd.revoke(lease.id) }
    }
}

enum ElectorError: Error {
    /// etcd no longer holds this node's lease.
    case leaseLost
    /// No renewal succeeded before the lease's deadline.
    case leaseExpired
    /// The leader key is no longer the one this node created.
    case leaderKeyLost
}
