/// One node's place in a cluster: the cluster's name, this node's, the etcd endpoints that elect
/// the leader, the URL the other nodes reach this one at, and the leader lease's TTL.
public struct ClusterConfiguration: Sendable, Equatable {
    public var name: String
    public var node: String
    public var etcd: [String]
    public var advertiseURL: String
    public var leaseSeconds: Int64
    /// The credential nodes present to each other on the replication channel (from a file).
    public var replicationToken: String
    /// How many followers must hold a write on disk before the leader acknowledges it; 0 runs
    /// the cluster asynchronously (a failover may then lose the last acknowledged writes).
    public var synchronousFollowers: Int
    /// How long a write waits for them before it is answered 503 (and writes are refused until
    /// they confirm it).
    public var synchronousTimeout: Duration

    public init(
        name: String, node: String, etcd: [String], advertiseURL: String, leaseSeconds: Int64 = 5, replicationToken: String = "",
        synchronousFollowers: Int = 1, synchronousTimeout: Duration = .seconds(10)
    ) {
        self.name = name
        self.node = node
        self.etcd = etcd
        self.advertiseURL = advertiseURL
        self.leaseSeconds = leaseSeconds
        self.replicationToken = replicationToken
        self.synchronousFollowers = synchronousFollowers
        self.synchronousTimeout = synchronousTimeout
    }

    /// Where this cluster's keys live in etcd: `/hearth/<name>/`.
    public var prefix: String { "/hearth/\(name)/" }
    /// The leader key: held under the leader's lease; its create revision is the term.
    public var leaderKey: String { prefix + "leader" }
    /// Each node's registration, under its own lease: what `hearth cluster status` lists.
    public var membersPrefix: String { prefix + "members/" }
    public var memberKey: String { membersPrefix + node }
    /// The synchronous set: which nodes hold every acknowledged write, so which may take over
    /// (`SynchronousSet`). Not under a lease: it outlives every node.
    public var synchronousKey: String { prefix + "sync" }
}
