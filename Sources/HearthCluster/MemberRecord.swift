import HearthWire

/// What a node writes about itself in etcd: under the leader key when it leads (node and URL),
/// and under its member key (role, term, ledger head, and when it said so).
public struct MemberRecord: Sendable, Equatable {
    public enum Role: String, Sendable {
        case leader, follower
    }

    public var node: String
    public var url: String
    public var role: Role
    /// The term it leads, or the one it last saw led.
    public var term: Int64?
    /// Its ledger's last sequence number.
    public var head: UInt64?
    /// A follower's lag behind its leader, in milliseconds (`ClusterState.Snapshot.lagMilliseconds`).
    public var lagMilliseconds: Int64?
    /// When it wrote this (Unix milliseconds).
    public var at: Int64

    public init(node: String, url: String, role: Role, term: Int64? = nil, head: UInt64? = nil, at: Int64) {
        self.node = node
        self.url = url
        self.role = role
        self.term = term
        self.head = head
        self.at = at
    }

    public var encoded: [UInt8] {
        var object: [String: JSONValue] = ["node": .string(node), "url": .string(url), "role": .string(role.rawValue), "at": .int(at)]
        if let term { object["term"] = .int(term) }
        if let head { object["head"] = .int(Int64(clamping: head)) }
        if let lagMilliseconds { object["lagMs"] = .int(lagMilliseconds) }
        return JSONValue.object(object).encoded()
    }

    public init?(_ bytes: [UInt8]) {
        guard let object = JSONValue.parse(bytes), let node = object["node"]?.stringValue, let url = object["url"]?.stringValue,
            let role = object["role"]?.stringValue.flatMap(Role.init(rawValue:))
        else { return nil }
        self.init(node: node, url: url, role: role, at: 0)
        if case .int(let term)? = object["term"] { self.term = term }
        if case .int(let head)? = object["head"], head >= 0 { self.head = UInt64(head) }
        if case .int(let lag)? = object["lagMs"] { lagMilliseconds = lag }
        if case .int(let at)? = object["at"] { self.at = at }
    }
}
