import HearthDomain
import LMDB

/// The ledger's side of replication (issue 32): the leader reads its records as stored, with the
/// key entries their sealed parts need; a follower appends them after checking that each
/// continues its chain, and keeps its key table as the leader's evolved, so a record it folds
/// opens (or is erased) exactly as on the leader.
extension Ledger {
    /// One unit of what a leader sends: a `ledger.keys` entry (its 16-byte key and its value,
    /// empty once destroyed) or a record as stored.
    public enum ReplicationItem: Equatable, Sendable {
        case keyEntry(key: [UInt8], value: [UInt8])
        case record([UInt8])
    }

    /// The records after `sequence`, at most `limit` of them and about `maxBytes`, each preceded
    /// by the key entry its sealed part names when it is the first in this batch to name it.
    public func replicationItems(after sequence: UInt64, limit: Int, maxBytes: Int, in txn: some Transaction) throws
        -> [ReplicationItem]
    {
        var items: [ReplicationItem] = []
        // The keys named so far, by the stored bytes that name them (no names parsed twice).
        var named = Set<[UInt8]>()
        var bytes = 0
        var records = 0
        try forEachRecord(from: sequence + 1, in: txn) { sequence, record in
            if let name = try RecordFormat.keyName(of: record) {
                var reference = [UInt8](name.stream)
                reference.append(0)
                if let account = name.account { reference.append(contentsOf: account) }
                withUnsafeBytes(of: name.generation) { reference.append(contentsOf: $0) }
                if named.insert(reference).inserted {
                    let owner = try RecordFormat.keyOwner(name, at: 0)
                    // A stream's first record names the stream's own key: its sequence is the entry's.
                    let first = name.account == nil && name.streamVersion == 1 ? sequence : try keys.firstSequence(of: owner, in: txn)
                    if let first {
                        let entry = StreamKeys.entryKey(first, name.generation)
                        // No entry: a generation a name-keyed table did not keep when it was moved
                        // (only the latest was), which this ledger reads as destroyed; so will the follower.
                        let value = try txn.get(keys.table, entry) ?? []
                        items.append(.keyEntry(key: entry, value: value))
                        bytes += entry.count + value.count
                    }
                }
            }
            items.append(.record(Array(record)))
            bytes += record.count
            records += 1
            return records >= limit || bytes >= maxBytes ? .stop : .continue
        }
        return items
    }

    /// The hash of the record at `sequence`, or `nil` when this ledger holds no such record: a
    /// leader compares it with a follower's head.
    public func hash(at sequence: UInt64, in txn: some Transaction) throws -> ChainHash? {
        try txn.withValue(events, forKey: BigEndianUInt64(sequence)) { record in
            try record.map { ChainHash(buffer: try RecordFormat.storedHash(of: $0)) }
        }
    }

    /// Drops the records after `sequence`: a tail this node wrote as a leader, or received from
    /// one, that its new leader's ledger does not hold (never acknowledged: the synchronous set
    /// did not hold it). Their stream index entries go with them, and the key entries of
    /// streams they began. Returns each dropped record's sequence, hash and time. Refused when
    /// the tail forgot an account (its key is destroyed here, and only a copy of the leader's
    /// ledger restores it).
    public func dropTail(after sequence: UInt64, in txn: WriteTransaction) throws -> [Head] {
        var dropped: [Head] = []
        var indexEntries: [[UInt8]] = []
        var cache = RecordFormat.StreamCache()
        try forEachRecord(from: sequence + 1, in: txn) { sequence, record in
            let event = try decodeRecordedEvent(record, streams: &cache, in: txn)
            if PersonalData.forgets(event.payload), PersonalData.keyOwner(of: event.stream, event.payload) != nil {
                throw ReplicationError.tailForgets(at: sequence)
            }
            indexEntries.append(try RecordFormat.streamIndexKey(of: record))
            dropped.append(
                Head(
                    sequence: sequence, hash: ChainHash(buffer: try RecordFormat.storedHash(of: record)),
                    recordedAt: try RecordFormat.recordedAt(of: record)))
            return .continue
        }
        for head in dropped { _ = try txn.delete(events, BigEndianUInt64(head.sequence)) }
        for entry in indexEntries { _ = try txn.delete(streams, entry) }
        // Key entries sort by their stream's first sequence: those after the tail's start are its.
        var made: [[UInt8]] = []
        try txn.forEach(keys.table, from: StreamKeys.entryKey(sequence + 1, 0)) { key, _ in
            // Past the entries: the table's older entries keyed by stream name.
            guard StreamKeys.isEntryKey(key) else { return .stop }
            made.append(Array(key))
            return .continue
        }
        for key in made { _ = try txn.delete(keys.table, key) }
        return dropped
    }

    /// Puts a key entry a leader sent, unless this ledger has it already (made by an earlier
    /// batch, or destroyed since by a record this follower applied, or live here while the
    /// leader destroyed it by a record still to come). A different live key is replaced: one
    /// this node made in a tail it dropped, which no record it holds was sealed with.
    public func receiveKeyEntry(key: [UInt8], value: [UInt8], in txn: WriteTransaction) throws {
        guard key.count == StreamKeys.entryKeySize, value.isEmpty || value.count == StreamKeys.wrappedSize else {
            throw ReplicationError.malformed("a key entry of \(key.count) + \(value.count) bytes")
        }
        if let held = try txn.get(keys.table, key), held.isEmpty || value.isEmpty || held == value { return }
        try txn.put(keys.table, key, value)
    }

    /// Checks, off the writer thread, that a record's hash is the hash of its bytes: what
    /// `appendReplicated` relies on when it links records by their stored hashes. Returns the
    /// head the record would make.
    @discardableResult
    package static func checkHash(of record: UnsafeRawBufferPointer) throws -> Head {
        let sequence = try RecordFormat.sequence(of: record)
        let hash = ChainHash(buffer: try RecordFormat.storedHash(of: record))
        guard hash == ChainHash.of(RecordFormat.hashedBytes(of: record)) else { throw ReplicationError.badHash(at: sequence) }
        return Head(sequence: sequence, hash: hash, recordedAt: try RecordFormat.recordedAt(of: record))
    }

    /// The latest term whose start this ledger records (`cluster.term_started`), read through
    /// the stream index, whatever the projections have folded; `nil` before the first.
    public func latestTerm(in txn: some Transaction) throws -> UInt64? {
        let stream = StreamID.cluster(.terms)
        let version = try version(of: stream, in: txn)
        guard version > 0 else { return nil }
        guard let sequence = try txn.get(streams, Self.streamKey(stream, version))?.value else {
            throw LedgerError.missingEvent(0)
        }
        guard let envelope = try envelope(at: sequence, in: txn) else { throw LedgerError.missingEvent(sequence) }
        guard case .termStarted(let started) = envelope.payload else { return nil }
        return started.term
    }
}

public enum ReplicationError: Error, Equatable, CustomStringConvertible {
    /// The record is not the one after this ledger's head.
    case gap(expected: UInt64, received: UInt64)
    /// The record does not link to this ledger's head: the two ledgers differ before it.
    case diverged(at: UInt64)
    /// The record's hash is not the hash of its bytes.
    case badHash(at: UInt64)
    /// A tail to drop forgot an account: its key is destroyed here.
    case tailForgets(at: UInt64)
    case malformed(String)

    public var description: String {
        switch self {
        case .gap(let expected, let received): "replication gap: expected record \(expected), received \(received)"
        case .diverged(let sequence):
            "record \(sequence) does not continue this ledger: it differs from the leader's before it (an unacknowledged tail of a former leader?)"
        case .badHash(let sequence): "record \(sequence)'s hash does not match its bytes"
        case .tailForgets(let sequence):
            "the unacknowledged tail to drop forgot an account (record \(sequence)), whose key only the leader still holds: restore this node from a backup of the leader (docs/cluster.md)"
        case .malformed(let detail): "malformed replication: \(detail)"
        }
    }
}
