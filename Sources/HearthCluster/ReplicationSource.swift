import HearthStore

/// The leader's end of the replication channel, `GET /hearth/v1/cluster/ledger?after=N`: the
/// records after `N` and the key entries they need (`ReplicationBatch`), as soon as there are
/// any, waiting up to `wait` for one. Only with the cluster's replication credential, and only
/// while this node leads. A follower's next request, `after` its new head, says it holds (fsynced)
/// everything before.
public struct ReplicationSource: Sendable {
    let store: AccountStore
    let token: String
    let wait: Duration

    public init(store: AccountStore, token: String, wait: Duration = .seconds(5)) {
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

    public func answer(after: UInt64?, authorization: String?) async -> Answer {
        guard let presented = authorization, presented.hasPrefix("Bearer "),
            constantTimeEquals(Array(presented.utf8.dropFirst(7)), Array(token.utf8))
        else {
            return Answer(status: 401, body: [], refusal: "the replication credential is missing or wrong")
        }
        guard let after else { return Answer(status: 400, body: [], refusal: "after: the follower's head, a sequence number") }
        let start = ContinuousClock.now
        do {
            while true {
                guard case .leader(let term, _) = store.writeAuthority.standing else {
                    return Answer(status: 409, body: [], refusal: "this node does not lead")
                }
                let head = try store.ledgerHead().sequence
                if after > head {
                    return Answer(
                        status: 409, body: [], head: head, term: term, refusal: "the follower is ahead of the leader's head \(head)")
                }
                if after < head {
                    let batch = try store.replication.batch(after: after)
                    return Answer(
                        status: 200, body: batch.bytes, head: head, term: term, ledgerKey: store.replication.ledgerKeyFingerprint)
                }
                guard ContinuousClock.now - start < wait else {
                    return Answer(status: 204, body: [], head: head, term: term, ledgerKey: store.replication.ledgerKeyFingerprint)
                }
                // A commit is a few milliseconds away at most under load; polling at this pace
                // costs nothing measurable and adds as little to the lag.
                try await Task.sleep(for: .milliseconds(2))
            }
        } catch {
            return Answer(status: 503, body: [], refusal: "\(error)")
        }
    }
}

/// Compares without stopping at the first difference (the time taken says nothing of the token).
func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}
