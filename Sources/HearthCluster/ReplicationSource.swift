import HearthStore

/// The leader's end of the replication channel, `GET /hearth/v1/cluster/ledger?after=N`: the
/// records after `N` and the key entries they need (`ReplicationBatch`), as soon as there are
/// any, waiting up to `wait` for one (short: a follower's request is also its sign of life).
/// Only with the cluster's replication credential, and only while this node leads. A follower
/// names itself (`Hearth-Node`) and where its ledger ends, by sequence and hash: an end this
/// ledger does not hold is refused as diverged (a former leader's tail), and one it holds
/// confirms that the follower has everything up to there, or up to `durable` when it says so, on
/// disk (`SynchronousCommit.confirm`), which is what lets the leader acknowledge writes.
public struct ReplicationSource: Sendable {
    let store: AccountStore
    let token: String
    let wait: Duration

    public init(store: AccountStore, token: String, wait: Duration = .seconds(1)) {
        self.store = store
        self.token = token
        self.wait = wait
    }

    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var body: [UInt8]
        /// The leader's head when it answered, and its term (`Hearth-Head`, `Hearth-Term`).
        public var head: UInt64?
        public var term: UInt64?
        /// Why it refused, for the follower's log.
        public var refusal: String?
        /// The leader's ledger key's short name, for a follower to compare with its own.
        public var ledgerKey: String?
    }

    public static let headHeader = "Hearth-Head"
    public static let termHeader = "Hearth-Term"
    public static let ledgerKeyHeader = "Hearth-Ledger-Key"
    /// The follower's node name, on its request.
    public static let nodeHeader = "Hearth-Node"

    /// A follower's request: where its ledger ends (`after`, and that record's `hash`), how far
    /// it holds its ledger on disk (`durable`, never past `after`; `after` when absent: a
    /// follower catching up asks for the next batch while it appends the last), and its node name.
    public struct Request: Sendable {
        public var after: UInt64?
        public var hash: String?
        public var durable: UInt64?
        public var node: String?
        public var authorization: String?

        public init(after: UInt64?, hash: String?, durable: UInt64? = nil, node: String?, authorization: String?) {
            self.after = after
            self.hash = hash
            self.durable = durable
            self.node = node
            self.authorization = authorization
        }
    }

    public func answer(_ request: Request) async -> Answer {
        guard ReplicationCredential(token: token).accepts(request.authorization) else {
            return Answer(status: 401, body: [], refusal: ReplicationCredential.refusal)
        }
        guard let after = request.after, let hash = request.hash, let node = request.node, (1...128).contains(node.utf8.count) else {
            return Answer(
                status: 400, body: [], refusal: "after and hash: the follower's head, by sequence and hash; Hearth-Node: its name")
        }
        let start = ContinuousClock.now
        var confirmed = false
        do {
            while true {
                guard case .leader(let term, _) = store.writeAuthority.standing else {
                    return Answer(status: 409, body: [], refusal: "this node does not lead")
                }
                let head = try store.ledgerHead().sequence
                if after > head {
                    return Answer(
                        status: 409, body: [], head: head, term: term,
                        refusal: "diverged: the follower is ahead of the leader's head \(head)")
                }
                if !confirmed {
                    guard try store.replication.holds(after, hash: hash) else {
                        return Answer(
                            status: 409, body: [], head: head, term: term,
                            refusal: "diverged: the follower's record \(after) is not the leader's")
                    }
                    store.synchronousCommit.confirm(node, through: min(request.durable ?? after, after))
                    confirmed = true
                }
                if after < head {
                    let batch = try store.replication.batch(after: after)
                    return Answer(
                        status: 200, body: batch.bytes, head: head, term: term, ledgerKey: store.replication.ledgerKeyFingerprint)
                }
                let waited = ContinuousClock.now - start
                guard waited < wait else {
                    return Answer(status: 204, body: [], head: head, term: term, ledgerKey: store.replication.ledgerKeyFingerprint)
                }
                await store.ledgerGrowth.wait(beyond: head, atMost: wait - waited)
            }
        } catch {
            return Answer(status: 503, body: [], refusal: "\(error)")
        }
    }
}

extension ReplicationSource {
    /// `GET /hearth/v1/cluster/ledger/hash?at=N`: the hash of the leader's record `N` (hex), so
    /// a follower whose head is not the leader's finds the last record both hold; 404 without it.
    public func hash(at sequence: UInt64?, authorization: String?) -> Answer {
        guard ReplicationCredential(token: token).accepts(authorization) else {
            return Answer(status: 401, body: [], refusal: ReplicationCredential.refusal)
        }
        guard let sequence else { return Answer(status: 400, body: [], refusal: "at: a sequence number") }
        guard case .leader(let term, _) = store.writeAuthority.standing else {
            return Answer(status: 409, body: [], refusal: "this node does not lead")
        }
        do {
            guard let hash = try store.replication.hash(at: sequence) else {
                return Answer(status: 404, body: [], term: term, refusal: "no record \(sequence)")
            }
            return Answer(status: 200, body: Array(hash.utf8), term: term)
        } catch {
            return Answer(status: 503, body: [], refusal: "\(error)")
        }
    }
}

extension ReplicationSource {
    /// Streams a follower may ask the key entries of in one request.
    public static let maxKeyStreams = 256

    /// `GET /hearth/v1/cluster/ledger/keys?streams=F1,F2,…`: every key entry of the streams whose
    /// first records are `F1`, `F2`, … (at most `maxKeyStreams`), as a batch of key entries: a
    /// former leader's tail to drop destroyed their keys, which only this ledger still holds.
    public func keyEntries(streams: String?, authorization: String?) -> Answer {
        guard ReplicationCredential(token: token).accepts(authorization) else {
            return Answer(status: 401, body: [], refusal: ReplicationCredential.refusal)
        }
        let firsts = streams.map { $0.split(separator: ",", omittingEmptySubsequences: false).map { UInt64($0) } } ?? []
        guard !firsts.isEmpty, firsts.count <= Self.maxKeyStreams, firsts.allSatisfy({ $0 != nil }) else {
            return Answer(status: 400, body: [], refusal: "streams: 1 to \(Self.maxKeyStreams) first sequences, comma-separated")
        }
        guard case .leader(let term, _) = store.writeAuthority.standing else {
            return Answer(status: 409, body: [], refusal: "this node does not lead")
        }
        do {
            let batch = try store.replication.keyEntries(ofStreamsBeginningAt: firsts.compactMap { $0 })
            return Answer(status: 200, body: batch.bytes, term: term, ledgerKey: store.replication.ledgerKeyFingerprint)
        } catch {
            return Answer(status: 503, body: [], refusal: "\(error)")
        }
    }
}
