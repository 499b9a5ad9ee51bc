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

    /// The first sequences of the streams begun at or before `sequence` whose keys the records
    /// after it destroyed (an account deleted or purged in a tail to drop): the key entries a
    /// former leader asks its new leader for (`keyEntries`) before it drops the tail, since only
    /// the leader still holds those keys.
    public func keysForgotten(after sequence: UInt64, in txn: some Transaction) throws -> [UInt64] {
        var firsts = Set<UInt64>()
        var cache = RecordFormat.StreamCache()
        try forEachRecord(from: sequence + 1, in: txn) { _, record in
            if let first = try firstOfStreamForgotten(by: record, cache: &cache, in: txn), first <= sequence { firsts.insert(first) }
            return .continue
        }
        return firsts.sorted()
    }

    /// The first sequence of the stream whose key `record` destroys, if it forgets an account.
    private func firstOfStreamForgotten(by record: UnsafeRawBufferPointer, cache: inout RecordFormat.StreamCache, in txn: some Transaction)
        throws -> UInt64?
    {
        let event = try decodeRecordedEvent(record, streams: &cache, in: txn)
        guard PersonalData.forgets(event.payload), let owner = PersonalData.keyOwner(of: event.stream, event.payload) else { return nil }
        return try keys.firstSequence(of: owner, in: txn)
    }

    /// Every key entry, of every generation, of the streams whose first records are `firsts`.
    public func keyEntries(ofStreamsBeginningAt firsts: [UInt64], in txn: some Transaction) throws -> [ReplicationItem] {
        var items: [ReplicationItem] = []
        for first in firsts {
            try txn.forEach(keys.table, prefix: StreamKeys.entryPrefix(first)) { key, value in
                items.append(.keyEntry(key: Array(key), value: Array(value)))
                return .continue
            }
        }
        return items
    }

    /// Drops the records after `sequence`: a tail this node wrote as a leader, or received from
    /// one, that its new leader's ledger does not hold (never acknowledged: the synchronous set
    /// did not hold it). Their stream index entries go with them, and the key entries of
    /// streams they began. The keys the tail destroyed of streams begun before it come back
    /// from `restoring`: the leader's entries of those streams (`keysForgotten`, `keyEntries`),
    /// which replace this ledger's. Refused when the tail forgot an account whose entries are
    /// not in `restoring`. Returns each dropped record's sequence, hash and time.
    public func dropTail(after sequence: UInt64, restoring: [(key: [UInt8], value: [UInt8])] = [], in txn: WriteTransaction) throws
        -> [Head]
    {
        var restored = Set<UInt64>()
        for entry in restoring {
            try Self.checkKeyEntry(key: entry.key, value: entry.value)
            let first = StreamKeys.firstSequence(ofEntry: entry.key)
            guard first <= sequence else { throw ReplicationError.malformed("a key entry of a stream the tail began") }
            restored.insert(first)
        }
        var dropped: [Head] = []
        var indexEntries: [[UInt8]] = []
        var cache = RecordFormat.StreamCache()
        let keptThrough = sequence
        try forEachRecord(from: sequence + 1, in: txn) { sequence, record in
            if let first = try firstOfStreamForgotten(by: record, cache: &cache, in: txn), first <= keptThrough, !restored.contains(first) {
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
        // Key entries sort by their stream's first sequence: those after the tail's start are its;
        // and those of the streams whose keys come back are replaced by the leader's.
        var replaced: [[UInt8]] = []
        try txn.forEach(keys.table, from: StreamKeys.entryKey(sequence + 1, 0)) { key, _ in
            // Past the entries: the table's older entries keyed by stream name.
            guard StreamKeys.isEntryKey(key) else { return .stop }
            replaced.append(Array(key))
            return .continue
        }
        for first in restored.sorted() {
            try txn.forEach(keys.table, prefix: StreamKeys.entryPrefix(first)) { key, _ in
                replaced.append(Array(key))
                return .continue
            }
        }
        for key in replaced { _ = try txn.delete(keys.table, key) }
        for entry in restoring { try txn.put(keys.table, entry.key, entry.value) }
        return dropped
    }

    /// Puts a key entry a leader sent, unless this ledger has it already (made by an earlier
    /// batch, or destroyed since by a record this follower applied, or live here while the
    /// leader destroyed it by a record still to come). A different live key is replaced: one
    /// this node made in a tail it dropped, which no record it holds was sealed with.
    public func receiveKeyEntry(key: [UInt8], value: [UInt8], in txn: WriteTransaction) throws {
        try Self.checkKeyEntry(key: key, value: value)
        if let held = try txn.get(keys.table, key), held.isEmpty || value.isEmpty || held == value { return }
        try txn.put(keys.table, key, value)
    }

    /// A key entry as a leader sends it: an entry key, and a wrapped key or nothing.
    private static func checkKeyEntry(key: [UInt8], value: [UInt8]) throws {
        guard key.count == StreamKeys.entryKeySize, key[0] == 0, value.isEmpty || value.count == StreamKeys.wrappedSize else {
            throw ReplicationError.malformed("a key entry of \(key.count) + \(value.count) bytes")
        }
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
    /// A tail to drop forgot an account: its key is destroyed here, and the leader's entries
    /// of it were not given.
    case tailForgets(at: UInt64)
    case malformed(String)

    public var description: String {
        switch self {
        case .gap(let expected, let received): "replication gap: expected record \(expected), received \(received)"
        case .diverged(let sequence):
            "record \(sequence) does not continue this ledger: it differs from the leader's before it (an unacknowledged tail of a former leader?)"
        case .badHash(let sequence): "record \(sequence)'s hash does not match its bytes"
        case .tailForgets(let sequence):
            "the unacknowledged tail to drop forgot an account (record \(sequence)), whose key the leader did not send back: restore this node from a backup of the leader (docs/cluster.md)"
        case .malformed(let detail): "malformed replication: \(detail)"
        }
    }
}
