import Foundation
import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

/// Replication's side of the store (issue 32): what a leader sends, and what a follower applies.
/// A follower appends the leader's records as they were stored (each checked to continue its own
/// chain) and folds them into its projections with the code every write folds with, in one
/// writer transaction: its projections are never behind its ledger, and at equal heads its
/// digest is the leader's.
public struct StoreReplication: Sendable {
    let store: AccountStore

    /// The ledger key's short name: a follower and its leader must hold the same key.
    public var ledgerKeyFingerprint: String? { store.ledger.keys.ledgerKeyFingerprint }

    /// Leader: the records after `sequence`, at most `limit` or about `maxBytes`, with the key
    /// entries they need; an empty batch when there are none.
    public func batch(after sequence: UInt64, limit: Int = 4_096, maxBytes: Int = 4 << 20) throws -> ReplicationBatch {
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

    /// Follower: drops the records after `sequence`, a tail its leader's ledger does not hold
    /// (so never acknowledged), and empties the projections, in one transaction; returns each
    /// dropped record's sequence, hash and time. `refold` then folds the projections again:
    /// until it has, they are behind the ledger (the caller reports the node not ready).
    public func dropTail(after sequence: UInt64) async throws -> [LedgerHead] {
        try await translatingErrors {
            try await store.environment.writer.submit { [store] txn in
                if case .leader = store.writeAuthority.standing {
                    throw StoreError.replication("this node leads: its ledger is the cluster's")
                }
                let dropped = try store.ledger.dropTail(after: sequence, in: txn)
                try store.projections.reset(in: txn)
                return dropped.map(LedgerHead.init)
            }
        }
    }

    /// Folds the projections up to the ledger's head (after `dropTail`), on a thread of its own.
    public func refold() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread { [store] in continuation.resume(with: Result { _ = try store.maintenance.catchUp() }) }
        }
    }

    /// Follower: appends and folds a batch from the leader, in one transaction, durable when
    /// this returns; returns the new head. Refused on a node that leads (it writes its own).
    @discardableResult
    public func apply(_ batch: ReplicationBatch) async throws -> LedgerHead {
        let items = try batch.items()
        return try await translatingErrors {
            try await store.environment.writer.submit { [store] txn in
                if case .leader = store.writeAuthority.standing {
                    throw StoreError.replication("this node leads: it replicates from no one")
                }
                let writer = store.projections.writer(txn)
                var streams = RecordFormat.StreamCache()
                var head = try store.ledger.head(in: txn)
                for item in items {
                    switch item {
                    case .keyEntry(let key, let value): try store.ledger.receiveKeyEntry(key: key, value: value, in: txn)
                    case .record(let record):
                        let event = try record.withUnsafeBytes {
                            try store.ledger.appendReplicated($0, after: &head, streams: &streams, in: txn)
                        }
                        if case .termStarted(let started) = event.payload {
                            // A record of an older term than one this ledger holds: from a stale leader.
                            let current = try store.projections.term(in: txn)
                            do {
                                _ = try ClusterTerms.start(started, after: current)
                            } catch {
                                throw StoreError.replication("record \(event.sequence) refused: \(error)")
                            }
                        }
                        try writer.apply(event)
                    }
                }
                try writer.flush()
                if let due = writer.earliestScheduled { store.cleanupChanges.announce(due) }
                return LedgerHead(head)
            }
        }
    }
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
    /// A received batch's frames, checked and split once.
    private let received: [Ledger.ReplicationItem]?

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
    }

    /// A batch received: split into its frames now (a frame cut short or of an unknown kind is
    /// refused here); each record is checked against the ledger when the batch is applied.
    public init(received bytes: [UInt8]) throws {
        self.bytes = bytes
        let items = try Self.items(of: bytes)
        records = items.count { if case .record = $0 { true } else { false } }
        received = items
    }

    private static func frame(_ kind: UInt8, _ payload: [UInt8], into bytes: inout [UInt8]) {
        bytes.append(kind)
        withUnsafeBytes(of: UInt32(payload.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: payload)
    }

    func items() throws -> [Ledger.ReplicationItem] { try received ?? Self.items(of: bytes) }

    private static func items(of bytes: [UInt8]) throws -> [Ledger.ReplicationItem] {
        var items: [Ledger.ReplicationItem] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 5 else { throw StoreError.replication("a frame cut short at byte \(offset)") }
            let kind = bytes[offset]
            let length = bytes[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            offset += 5
            guard bytes.count - offset >= length else { throw StoreError.replication("a frame of \(length) bytes cut short") }
            let payload = Array(bytes[offset..<(offset + length)])
            offset += length
            switch kind {
            case 1:
                guard payload.count >= 16 else { throw StoreError.replication("a key entry of \(payload.count) bytes") }
                items.append(.keyEntry(key: Array(payload[..<16]), value: Array(payload[16...])))
            case 2: items.append(.record(payload))
            default: throw StoreError.replication("a frame of unknown kind \(kind)")
            }
        }
        return items
    }
}
