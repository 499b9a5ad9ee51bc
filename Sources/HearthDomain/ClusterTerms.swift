/// `cluster.term_started`: the first record of each term, written by the node etcd elected, so
/// the ledger itself says who wrote what (every record after it, up to the next one, is that
/// node's) and from which head it started (what it held when it was elected).
public struct TermStarted: Equatable, Sendable, Encodable {
    /// The term: the leader key's create revision in etcd, which only grows.
    public var term: UInt64
    /// The elected node's `cluster.node`.
    public var node: String
    /// The ledger's head when the term started: its sequence number and chain hash (hex), the
    /// record this term's first one links to.
    public var after: UInt64
    public var afterHash: String

    public init(term: UInt64, node: String, after: UInt64, afterHash: String) {
        self.term = term
        self.node = node
        self.after = after
        self.afterHash = afterHash
    }
}

/// The rule of terms: each one is later than every term the ledger has recorded. A node elected
/// for an older term than one it already holds a record of must not write (its election is
/// stale), and a follower refuses a record that starts an older term than one it holds.
public enum ClusterTerms {
    public static func start(_ started: TermStarted, after current: UInt64?) throws(ClusterTermError) -> [EventPayload] {
        if let current, started.term <= current { throw .staleTerm(started.term, current: current) }
        guard !started.node.isEmpty else { throw .unnamedNode }
        return [.termStarted(started)]
    }
}

public enum ClusterTermError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A term no later than `current`, the latest the ledger holds.
    case staleTerm(UInt64, current: UInt64)
    case unnamedNode

    public var description: String {
        switch self {
        case .staleTerm(let term, let current): "term \(term) is not later than term \(current), which the ledger already holds"
        case .unnamedNode: "a term must name its node"
        }
    }
}
