import Foundation
import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

/// Replication's side of the store (issue 32): what a leader sends, and what a follower applies.
/// A follower appends the leader's records as they were stored (each checked to continue its own
/// chain) and commits: then it holds them. Its projections fold them behind (`FollowerFold`),
/// with the catch-up a rebuild runs; at equal heads, folded, its digest is the leader's.
public struct StoreReplication: Sendable {
    let store: AccountStore

    /// The ledger key's short name: a follower and its leader must hold the same key.
    public var ledgerKeyFingerprint: String? { store.ledger.keys.ledgerKeyFingerprint }

    /// Leader: the records after `sequence`, at most `limit` or about `maxBytes`, with the key
    /// entries they need; an empty batch when there are none.
    public func batch(after sequence: UInt64, limit: Int = 16_384, maxBytes: Int = 16 << 20) throws -> ReplicationBatch {
        try translatingErrors {
            try store.environment.read { txn in
                ReplicationBatch(try store.ledger.replicationItems(after: sequence, limit: limit, maxBytes: maxBytes, in: txn))
            }
        }
    }

    /// Leader: whether this ledger's record at `sequence` has `hash` (hex), so a follower whose
    /// head it is holds this ledger's records up to there, and not a tail of its own.
    public func holds(_ sequence: UInt64, hash: String) throws -> Bool {
        // An empty ledger holds no tail of its own, whatever it links to.
        guard sequence > 0 else { return true }
        return try translatingErrors {
            try store.environment.read { txn in try store.ledger.hash(at: sequence, in: txn).map { hex($0) } == hash.lowercased() }
        }
    }

    /// The hash (hex) of this ledger's record at `sequence`, or `nil` if it holds none.
    public func hash(at sequence: UInt64) throws -> String? {
        try translatingErrors { try store.environment.read { txn in try store.ledger.hash(at: sequence, in: txn).map { hex($0) } } }
    }

    /// Follower: the streams (by their first records' sequences) whose keys the records after
    /// `sequence` destroyed, though they began before it: what to ask the leader for
    /// (`keyEntries`) before dropping that tail.
    public func keysForgotten(after sequence: UInt64) throws -> [UInt64] {
        try translatingErrors { try store.environment.read { txn in try store.ledger.keysForgotten(after: sequence, in: txn) } }
    }

    /// Leader: every key entry of the streams whose first records are `firsts`, as a batch of
    /// key entries alone.
    public func keyEntries(ofStreamsBeginningAt firsts: [UInt64]) throws -> ReplicationBatch {
        try translatingErrors {
            try store.environment.read { txn in ReplicationBatch(try store.ledger.keyEntries(ofStreamsBeginningAt: firsts, in: txn)) }
        }
    }

    /// Follower: drops the records after `sequence`, a tail its leader's ledger does not hold
    /// (so never acknowledged), puts back the keys it destroyed from `restoring` (the leader's
    /// `keyEntries` of the streams `keysForgotten` named), and empties the projections, in one
    /// transaction, with no fold in progress; returns each dropped record's sequence, hash and
    /// time. The projections then fold again from the first record (`folded()` waits for it):
    /// until then they are behind the ledger (the caller reports the node not ready).
    public func dropTail(after sequence: UInt64, restoring: ReplicationBatch? = nil) async throws -> [LedgerHead] {
        let entries = try restoring?.keyEntries() ?? []
        return try await store.followerFold.paused {
            try await translatingErrors {
                try await store.environment.writer.submit { [store] txn in
                    if case .leader = store.writeAuthority.standing {
                        throw StoreError.replication("this node leads: its ledger is the cluster's")
                    }
                    let dropped = try store.ledger.dropTail(after: sequence, restoring: entries, in: txn)
                    try store.projections.reset(in: txn)
                    return dropped.map(LedgerHead.init)
                }
            }
        }
    }

    /// How far the projections trail the ledger, in records, and why the last fold failed (while
    /// no later one has succeeded): a follower's reads come from its projections.
    public func folding() throws -> (behind: UInt64, failure: String?) {
        let folded = try store.followerFold.checkpoint()
        let head = try store.ledgerHead().sequence
        return (head > folded ? head - folded : 0, store.followerFold.failure)
    }

    /// Returns once the projections hold every record of the ledger (as of the call).
    public func folded() async throws {
        try await store.followerFold.folded(through: store.ledgerHead().sequence)
    }

    /// Follower: appends a batch from the leader, in one transaction, durable when this
    /// returns; returns the new head and the lag it was committed with. The records' hashes were
    /// checked as the batch was split (`ReplicationBatch`), off the writer thread; here each must
    /// continue the ledger. A record starting a term older than the ledger's latest is refused:
    /// it comes from a stale leader. Refused on a node that leads (it writes its own).
    @discardableResult
    public func apply(_ batch: ReplicationBatch) async throws -> AppliedBatch {
        let frames = try batch.frames()
        let applied = try await translatingErrors {
            try await store.environment.writer.submit({ [store] txn in
                if case .leader = store.writeAuthority.standing {
                    throw StoreError.replication("this node leads: it replicates from no one")
                }
                // Closing: the fold's last pass must find nothing appended after it.
                if store.followerFold.isStopping { throw StoreError.closed }
                // The latest term this ledger started, read once (a handful of microseconds a batch).
                var term = try store.ledger.latestTerm(in: txn)
                let head = try store.ledger.appendReplicated(in: txn) { append in
                    try batch.bytes.withUnsafeBytes { bytes in
                        for frame in frames {
                            switch frame {
                            case .keyEntry(let range):
                                let entry = UnsafeRawBufferPointer(rebasing: bytes[range])
                                try store.ledger.receiveKeyEntry(key: Array(entry[..<16]), value: Array(entry[16...]), in: txn)
                            case .record(let range):
                                let record = UnsafeRawBufferPointer(rebasing: bytes[range])
                                guard try append.append(record),
                                    case .termStarted(let started) = try store.ledger.decode(record, in: txn).payload
                                else { continue }
                                do {
                                    _ = try ClusterTerms.start(started, after: term)
                                } catch {
                                    throw StoreError.replication("record \(append.head.sequence) refused: \(error)")
                                }
                                term = started.term
                            }
                        }
                    }
                }
                return LedgerHead(head)
            }) { [clock = store.clock] head in
                // Read as the commit lands, not once this task runs again (on a loaded node,
                // milliseconds later).
                AppliedBatch(head: head, lag: max(0, clock.now() - head.recordedAt))
            }
        }
        store.followerFold.request()
        return applied
    }
}

/// A batch a follower appended: its new head, and the replication lag of the batch's last
/// record, in milliseconds from the leader's recording of it to this node's commit.
public struct AppliedBatch: Sendable, Equatable {
    public let head: LedgerHead
    public let lag: Int64
}

extension AccountStore {
    /// Sending and applying the ledger between the nodes of a cluster.
    public var replication: StoreReplication { StoreReplication(store: self) }
}

/// Records and key entries as they cross the network: frames of a kind byte (1: a key entry,
/// its 16-byte key then its value; 2: a record as stored) and a big-endian 32-bit length.
public struct ReplicationBatch: Sendable {
    public let bytes: [UInt8]
    /// Records in the batch.
    public let records: Int
    /// A received batch's frames, checked and located once (the records are not copied out).
    private let received: [Frame]?
    /// The head a received batch's last record makes once appended (`nil` without records): a
    /// follower may ask for what follows while it appends this batch.
    public let last: LedgerHead?

    /// Where a frame's payload lies in `bytes`.
    enum Frame: Sendable {
        case keyEntry(Range<Int>)
        case record(Range<Int>)
    }

    init(_ items: [Ledger.ReplicationItem]) {
        var bytes: [UInt8] = []
        var records = 0
        for item in items {
            switch item {
            case .keyEntry(let key, let value): Self.frame(1, key + value, into: &bytes)
            case .record(let record):
                Self.frame(2, record, into: &bytes)
                records += 1
            }
        }
        self.bytes = bytes
        self.records = records
        received = nil
        last = nil
    }

    /// A batch received: split into its frames now, each record's hash checked against its
    /// bytes (a frame cut short or of an unknown kind, or a record whose hash is wrong, is
    /// refused here, on the receiving thread); each record is checked to continue the ledger
    /// when the batch is applied.
    public init(received bytes: [UInt8]) throws {
        self.bytes = bytes
        let (frames, last) = try Self.frames(of: bytes)
        records = frames.count { if case .record = $0 { true } else { false } }
        received = frames
        self.last = last.map(LedgerHead.init)
    }

    private static func frame(_ kind: UInt8, _ payload: [UInt8], into bytes: inout [UInt8]) {
        bytes.append(kind)
        withUnsafeBytes(of: UInt32(payload.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: payload)
    }

    func frames() throws -> [Frame] { try received ?? Self.frames(of: bytes).frames }

    /// The key entries of a batch of key entries alone (what a leader sends back for a tail to
    /// drop); refused if it holds a record.
    func keyEntries() throws -> [(key: [UInt8], value: [UInt8])] {
        try frames().map { frame in
            guard case .keyEntry(let range) = frame else {
                throw StoreError.replication("a record where key entries alone were asked for")
            }
            return (Array(bytes[range.prefix(16)]), Array(bytes[range.dropFirst(16)]))
        }
    }

    private static func frames(of bytes: [UInt8]) throws -> (frames: [Frame], last: Ledger.Head?) {
        try bytes.withUnsafeBytes { raw in
            var frames: [Frame] = []
            var last: Ledger.Head?
            var offset = 0
            while offset < raw.count {
                guard raw.count - offset >= 5 else { throw StoreError.replication("a frame cut short at byte \(offset)") }
                let kind = raw[offset]
                let length = raw[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
                offset += 5
                guard raw.count - offset >= length else { throw StoreError.replication("a frame of \(length) bytes cut short") }
                let range = offset..<(offset + length)
                offset += length
                switch kind {
                case 1:
                    guard length >= 16 else { throw StoreError.replication("a key entry of \(length) bytes") }
                    frames.append(.keyEntry(range))
                case 2:
                    do {
                        last = try Ledger.checkHash(of: UnsafeRawBufferPointer(rebasing: raw[range]))
                    } catch {
                        throw StoreError.replication("\(error)")
                    }
                    frames.append(.record(range))
                default: throw StoreError.replication("a frame of unknown kind \(kind)")
                }
            }
            return (frames, last)
        }
    }
}
