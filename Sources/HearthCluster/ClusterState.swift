import Synchronization

/// What this node knows of its cluster, for `/readyz`, the metrics and the log: its role, the
/// term, and the leader.
public final class ClusterState: Sendable {
    public struct Snapshot: Sendable, Equatable {
        public var role: MemberRecord.Role = .follower
        /// The term this node leads, or the one it last saw led.
        public var term: Int64?
        /// The leader as etcd names it (this node, when it leads); `nil` while none is known.
        public var leader: MemberRecord?
        /// Whether etcd answered this node's last call.
        public var etcdReachable = false
        public var elections = 0
        /// Times this node stopped leading without choosing to (its lease ran out, or the key went).
        public var fenced = 0
        /// A follower's replication: the leader's head when it last answered, and what stopped
        /// the last batch, if something did.
        public var leaderHead: UInt64?
        public var replicationError: String?
        /// Records applied from the leader since start.
        public var replicated: UInt64 = 0
        /// Milliseconds from the leader's recording of the last record this follower applied to
        /// this follower's commit of it (by the two machines' clocks); 0 once it is caught up.
        public var lagMilliseconds: Int64?
        /// The synchronous set, as this node last read or wrote it, and whether it lets this
        /// node take over.
        public var synchronous: SynchronousSet?
        public var mayLead = true
        /// Why this node's projections fail to fold, while they do: it does not campaign.
        public var foldFailure: String?
        /// Unacknowledged tails this node dropped to follow its leader.
        public var droppedTails = 0

        public init() {}
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    func update(_ change: (inout Snapshot) -> Void) {
        state.withLock { change(&$0) }
    }
}
