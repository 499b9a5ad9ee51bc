import HearthDomain
import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Ledger {
    /// Appends a batch of records a leader sent (`body` calls `ReplicatedAppend.append` for each,
    /// in order), in `txn`; returns the new head.
    package func appendReplicated(in txn: WriteTransaction, _ body: (inout ReplicatedAppend) throws -> Void) throws -> Head {
        try txn.withWriteCursor(events) { events in
            try txn.withWriteCursor(streams) { streams in
                var append = ReplicatedAppend(ledger: self, txn: txn, events: events, streams: streams, head: try head(in: txn))
                try body(&append)
                try append.indexPending()
                return append.head
            }
        }
    }
}

/// A follower's append of one batch from its leader. Each record, its hash already checked
/// (`Ledger.checkHash`), must be the next sequence number, linked to the head by its previous
/// hash; a type this version does not know is refused. The stream index gets each record's entry
/// as the leader's has it: the chain proves this ledger holds the leader's records up to here,
/// and the leader numbered each stream's events (an entry already there is refused). A record that
/// forgets destroys its stream's key here, as the leader's append did in the same transaction.
/// Nothing is decoded: the projections fold the records later, from this ledger
/// (`ProjectionMaintenance.catchUp`).
///
/// Records go to the end of `ledger.events` through one cursor, with no search. Their index
/// entries land at random places in `ledger.streams` (a stream's name leads its key); they are
/// put sorted, at the batch's end, through one cursor, so consecutive entries on one page skip
/// the descent from the root, and the pages are visited in order.
package struct ReplicatedAppend: ~Copyable {
    private let ledger: Ledger
    private let txn: WriteTransaction
    private let events: WriteCursor<BigEndianUInt64, [UInt8]>
    private let streams: WriteCursor<[UInt8], BigEndianUInt64>
    package private(set) var head: Ledger.Head
    /// The index keys not yet put, end to end, and where each ends with its record's sequence.
    private var pendingKeys: [UInt8] = []
    private var pending: [(end: Int, sequence: UInt64)] = []

    fileprivate init(
        ledger: Ledger, txn: WriteTransaction, events: WriteCursor<BigEndianUInt64, [UInt8]>,
        streams: WriteCursor<[UInt8], BigEndianUInt64>, head: Ledger.Head
    ) {
        self.ledger = ledger
        self.txn = txn
        self.events = events
        self.streams = streams
        self.head = head
    }

    /// Appends the record after the head; returns whether it starts a term (the caller checks
    /// the term, reading this transaction: the index is complete when it returns true).
    package mutating func append(_ record: UnsafeRawBufferPointer) throws -> Bool {
        let sequence = try RecordFormat.sequence(of: record)
        guard sequence == head.sequence + 1 else { throw ReplicationError.gap(expected: head.sequence + 1, received: sequence) }
        guard ChainHash(buffer: try RecordFormat.previousHash(of: record)) == head.hash else {
            throw ReplicationError.diverged(at: sequence)
        }
        let recordedAt = try RecordFormat.recordedAt(of: record)
        guard recordedAt >= head.recordedAt else { throw ReplicationError.malformed("record \(sequence) is older than the head") }
        let (forgets, startsTerm, streamName) = try RecordFormat.appendInfo(of: record, appendingIndexKeyTo: &pendingKeys)
        pending.append((pendingKeys.count, sequence))
        try events.put(BigEndianUInt64(sequence), record, options: .append)
        head = Ledger.Head(sequence: sequence, hash: ChainHash(buffer: try RecordFormat.storedHash(of: record)), recordedAt: recordedAt)
        if forgets {
            let owner = try RecordFormat.stream(named: streamName)
            switch owner {
            case .account, .oobCode:
                // The key is found through the index (its stream's first record).
                try indexPending()
                try ledger.keys.destroy(owner, in: txn)
            case .project, .cluster: break
            }
        }
        if startsTerm { try indexPending() }
        return startsTerm
    }

    /// Puts the pending index entries, in key order (LMDB's: bytes compared, then lengths).
    mutating func indexPending() throws {
        guard !pending.isEmpty else { return }
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingKeys.removeAll(keepingCapacity: true)
        }
        try pendingKeys.withUnsafeBytes { keys in
            let base = keys.baseAddress!
            var order: [(start: Int, count: Int, sequence: UInt64)] = []
            order.reserveCapacity(pending.count)
            var start = 0
            for (end, sequence) in pending {
                order.append((start, end - start, sequence))
                start = end
            }
            order.sort { a, b in
                let common = memcmp(base + a.start, base + b.start, min(a.count, b.count))
                return common != 0 ? common < 0 : a.count < b.count
            }
            for entry in order {
                do {
                    try streams.put(
                        encodedKey: UnsafeRawBufferPointer(start: base + entry.start, count: entry.count), BigEndianUInt64(entry.sequence),
                        options: .noOverwrite)
                } catch let error as LMDBError where error == .keyExists {
                    throw ReplicationError.malformed("record \(entry.sequence) repeats a version of its stream")
                }
            }
        }
    }
}
