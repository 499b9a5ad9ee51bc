import HearthCrypto
import HearthDomain
import LMDB

/// The append-only event log: `events` (global sequence -> record) and `streams`
/// (stream + stream version -> sequence). Nothing in them is ever updated or deleted. Beside
/// them, `keys` holds each stream's data key, which seals its personal data and is destroyed
/// to forget it (`PersonalData`).
public struct Ledger: Sendable {
    public let events: Database<BigEndianUInt64, [UInt8]>
    public let streams: Database<[UInt8], BigEndianUInt64>
    public let keys: StreamKeys
    /// The replaced ledger this chain continues, if any (`LedgerOrigin`).
    let origins: Database<String, [UInt8]>
    /// Appends as Hearth did before sealing (format 1, in plain text): the benchmark's baseline
    /// for what sealing costs, in the same run. Never set outside it.
    package var writesBeforeSealing = false

    /// `ledgerKey` (32 bytes, the data directory's `ledger-key`) wraps the streams' keys; `nil`
    /// opens a ledger whose sealed records can not be read or written (to look at its key table).
    public static func open(_ environment: Environment, ledgerKey: [UInt8]?) throws -> Ledger {
        precondition(ledgerKey == nil || ledgerKey?.count == 32, "a ledger key is 32 bytes")
        let events: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "ledger.events")
        let streams: Database<[UInt8], BigEndianUInt64> = try environment.openDatabase(named: "ledger.streams")
        return Ledger(
            events: events,
            streams: streams,
            keys: StreamKeys(
                table: try environment.openDatabase(named: StreamKeys.tableName), streams: streams, events: events, ledgerKey: ledgerKey),
            origins: try environment.openDatabase(named: LedgerOrigin.tableName))
    }

    public func origin(in txn: some Transaction) throws -> LedgerOrigin? {
        try txn.withValue(origins, forKey: LedgerOrigin.key) { bytes in try bytes.map(LedgerOrigin.init(decoding:)) }
    }

    /// Makes an empty ledger continue `origin`'s chain: its first record will link to that hash.
    public func anchor(to origin: LedgerOrigin, in txn: WriteTransaction) throws {
        let empty = try head(in: txn).sequence == 0
        precondition(empty, "only an empty ledger is anchored")
        try txn.put(origins, LedgerOrigin.key, origin.encoded)
    }

    public struct Head: Equatable, Sendable {
        /// Last sequence number; 0 for an empty ledger.
        public var sequence: UInt64
        public var hash: ChainHash
        public var recordedAt: Int64

        public static let genesis = Head(sequence: 0, hash: .zero, recordedAt: 0)
    }

    public func head(in txn: some Transaction) throws -> Head {
        try txn.withCursor(events) { cursor in
            guard let (_, record) = try cursor.last() else {
                guard let origin = try origin(in: txn) else { return .genesis }
                return Head(sequence: 0, hash: origin.previousHash, recordedAt: 0)
            }
            return Head(
                sequence: try RecordFormat.sequence(of: record), hash: ChainHash(buffer: try RecordFormat.storedHash(of: record)),
                recordedAt: try RecordFormat.recordedAt(of: record))
        }
    }

    static func streamPrefix(_ stream: StreamID) -> [UInt8] {
        var prefix = StreamName(stream).bytes(reservingExtra: 9)
        prefix.append(0)
        return prefix
    }

    static func streamKey(_ stream: StreamID, _ version: UInt64) -> [UInt8] {
        var key = streamPrefix(stream)
        withUnsafeBytes(of: version.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// The stream's current version: the number of events in it, 0 if none.
    public func version(of stream: StreamID, in txn: some Transaction) throws -> UInt64 {
        let prefix = Self.streamPrefix(stream)
        return try txn.withCursor(streams) { cursor in
            guard let (key, _) = try cursor.seek(atMost: Self.streamKey(stream, .max)), key.starts(with: prefix),
                key.count == prefix.count + 8
            else { return 0 }
            return try BigEndianUInt64(decoding: UnsafeRawBufferPointer(rebasing: key[prefix.count...])).value
        }
    }

    /// Appends `payloads` to `stream` if its version is as expected. Sequence numbers are
    /// assigned here, inside the write transaction, so they are gapless and in commit order.
    /// Personal data is sealed under the stream's key (made with its first sealed event), and
    /// an event that forgets destroys the key in this same transaction: no crash can leave the
    /// event recorded and the key alive, or the other way round.
    /// `keys`: the transaction's cache of opened keys (`StreamKeys.Cache`), if it keeps one.
    public func append(
        _ payloads: [EventPayload], to stream: StreamID, expecting expected: ExpectedVersion = .any,
        metadata: Metadata, at now: Int64, in txn: WriteTransaction, keys cache: StreamKeys.Cache? = nil
    ) throws -> [EventEnvelope] {
        let current = try version(of: stream, in: txn)
        guard expected.allows(current) else { throw LedgerError.wrongExpectedVersion(stream: stream, expected: expected, actual: current) }
        guard !payloads.isEmpty else { return [] }
        if writesBeforeSealing {
            return try appendBeforeSealing(payloads, to: stream, version: current, metadata: metadata, at: now, in: txn)
        }
        var head = try head(in: txn)
        // Recorded-at never goes backwards, so time filters can rely on sequence order.
        let recordedAt = max(now, head.recordedAt)
        var appended: [EventEnvelope] = []
        appended.reserveCapacity(payloads.count)
        // The key this append seals with: the stream's own, or (an action code's) its account's.
        var ownKey: StreamKeys.SealingKey?
        var accountKey: StreamKeys.OwnedSealingKey?
        let cache = cache ?? StreamKeys.Cache()
        // The transaction's buffers, held in locals while in use: a class's stored properties
        // written in place are checked for exclusive access at run time, each time.
        let scratch = txn.kept(RecordScratch.init)
        var buffers = scratch.take()
        defer { scratch.keep(buffers) }
        for offset in payloads.indices {
            let payload = payloads[offset]
            let sequence = head.sequence + 1
            let streamVersion = current + UInt64(offset) + 1
            buffers.empty()
            // The sealed plaintext is the client address, then the payload's personal fields.
            buffers.plaintext.write(metadata.clientIp)
            let hasPersonal = PayloadCodec.encode(payload, open: &buffers.open, personal: &buffers.plaintext)
            let ownership = PersonalData.keyOwnership(of: stream, payload)
            let keyed = ownership.isKeyed
            let forgets = keyed && PersonalData.forgets(payload)
            var isSealed = false
            if keyed && !forgets && (hasPersonal || metadata.clientIp != nil) {
                let sealing: (owner: StreamID?, generation: UInt64, key: AES256GCMKey)
                if case .account(let owner) = ownership, let found = try self.accountKey(owner, held: &accountKey, in: txn, cache: cache) {
                    sealing = (owner, found.generation, found.key)
                } else {
                    // The stream's own key; also an action code's whose account has no events.
                    if ownKey == nil {
                        // A new stream's first event is this append's first record.
                        let firstOfAppend = head.sequence + 1 - UInt64(offset)
                        ownKey = try keys.sealingKey(
                            for: stream, firstSequence: current == 0 ? firstOfAppend : nil, in: txn, cache: cache)
                    }
                    guard let own = ownKey else { throw LedgerKeyError.missingStreamKey(stream) }
                    sealing = (nil, own.generation, own.key)
                }
                buffers.plaintext.bytes.withUnsafeBytes { plaintext in
                    RecordFormat.seal(
                        plaintext, key: sealing.key, generation: sealing.generation, owner: sealing.owner, sequence: sequence,
                        into: &buffers.sealed)
                }
                isSealed = true
            }
            // The client address is never in plain text: sealed on a keyed stream, or (an event
            // that forgets, a project's or the cluster's stream, which no key could forget) not kept.
            RecordFormat.encodeUnhashed(
                into: &buffers.record, sequence: sequence, recordedAt: recordedAt, stream: stream, streamVersion: streamVersion,
                type: payload.type, payload: buffers.open.bytes, metadata: metadata, omittingClientIp: true,
                sealed: buffers.sealed.bytes, previousHash: head.hash)
            let hash = buffers.record.bytes.withUnsafeBytes { ChainHash.of($0) }
            hash.withBytes { buffers.record.write(raw: $0) }
            try txn.put(events, BigEndianUInt64(sequence), buffers.record.bytes, options: .append)
            try txn.put(streams, Self.streamKey(stream, streamVersion), BigEndianUInt64(sequence), options: .noOverwrite)
            var recorded = metadata
            if !isSealed { recorded.clientIp = nil }
            if forgets {
                try keys.destroy(stream, in: txn, cache: cache)
                ownKey = nil
                accountKey = nil
            }
            appended.append(
                EventEnvelope(
                    sequence: sequence, stream: stream, streamVersion: streamVersion, type: payload.type,
                    recordedAt: recordedAt, metadata: recorded, payload: payload, previousHash: head.hash, hash: hash,
                    personalData: isSealed ? .sealed : .none))
            head = Head(sequence: sequence, hash: hash, recordedAt: recordedAt)
        }
        return appended
    }

    /// The key of the account an action code names, as the append last held it or from the
    /// key table; `nil` when the account has no events.
    private func accountKey(
        _ owner: StreamID, held: inout StreamKeys.OwnedSealingKey?, in txn: WriteTransaction,
        cache: StreamKeys.Cache
    ) throws -> StreamKeys.SealingKey? {
        if let held, held.owner == owner { return (held.generation, held.key) }
        guard let found = try keys.sealingKey(for: owner, firstSequence: nil, in: txn, cache: cache) else { return nil }
        held = (owner, found.generation, found.key)
        return found
    }

    /// The buffers records are encoded in, emptied and reused from record to record: a record
    /// costs no allocation of its own.
    private struct RecordBuffers {
        var open = ByteWriter(capacity: 256)
        /// What is sealed: the client address and the payload's personal fields. Zeroed as it is
        /// emptied, so it holds no record's but the one being written.
        var plaintext = ByteWriter(capacity: 256)
        var sealed = ByteWriter(capacity: 256)
        var record = ByteWriter(capacity: 512)

        mutating func empty() {
            open.removeAll()
            plaintext.wipeAll()
            sealed.removeAll()
            record.removeAll()
        }
    }

    /// A write transaction's `RecordBuffers`, from one append to the next.
    private final class RecordScratch {
        private var kept: RecordBuffers?

        func take() -> RecordBuffers {
            defer { kept = nil }
            return kept ?? RecordBuffers()
        }

        func keep(_ buffers: RecordBuffers) { kept = buffers }

        deinit { kept?.plaintext.wipeAll() }
    }

    /// Decodes a record, its personal data opened with its stream's key (or erased with it).
    public func decode(_ record: UnsafeRawBufferPointer, in txn: some Transaction) throws -> EventEnvelope {
        try decode(record, in: txn, cache: KeyCache())
    }

    public typealias KeyCache = StreamKeys.ReadCache

    /// `decode`, through `cache`.
    public func decode(_ record: UnsafeRawBufferPointer, in txn: some Transaction, cache: KeyCache) throws -> EventEnvelope {
        try RecordFormat.decode(record) { try keys.key(for: $0, generation: $1, firstSequence: $2, in: txn, cache: cache) }
    }

    /// What a projection folds from a record (`RecordFormat.decodeRecordedEvent`).
    public func decodeRecordedEvent(
        _ record: UnsafeRawBufferPointer, streams: inout RecordFormat.StreamCache, in txn: some Transaction
    ) throws -> RecordedEvent {
        let cache = streams.keys
        return try RecordFormat.decodeRecordedEvent(record, streams: &streams) {
            try keys.key(for: $0, generation: $1, firstSequence: $2, in: txn, cache: cache)
        }
    }

    public func envelope(at sequence: UInt64, in txn: some Transaction) throws -> EventEnvelope? {
        try envelope(at: sequence, in: txn, cache: KeyCache())
    }

    func envelope(at sequence: UInt64, in txn: some Transaction, cache: KeyCache) throws -> EventEnvelope? {
        try txn.withValue(events, forKey: BigEndianUInt64(sequence)) { record in
            try record.map { try decode($0, in: txn, cache: cache) }
        }
    }

    /// Visits raw records in sequence order from `sequence` on.
    public func forEachRecord(
        from sequence: UInt64 = 1, in txn: some Transaction,
        _ body: (_ sequence: UInt64, _ record: UnsafeRawBufferPointer) throws -> IterationControl
    ) throws {
        try txn.forEach(events, from: BigEndianUInt64(sequence)) { key, record in
            try body(try BigEndianUInt64(decoding: key).value, record)
        }
    }

    /// Visits raw records in descending sequence order, from the last one at or below `sequence`.
    public func forEachRecord(
        downFrom sequence: UInt64, in txn: some Transaction,
        _ body: (_ sequence: UInt64, _ record: UnsafeRawBufferPointer) throws -> IterationControl
    ) throws {
        try txn.withCursor(events) { cursor in
            var entry = try cursor.seek(atMost: BigEndianUInt64(sequence))
            while let (key, record) = entry {
                if try body(try BigEndianUInt64(decoding: key).value, record) == .stop { return }
                entry = try cursor.previous()
            }
        }
    }

    /// Visits decoded events in sequence order from `sequence` on.
    public func forEachEvent(
        from sequence: UInt64 = 1, in txn: some Transaction, _ body: (EventEnvelope) throws -> IterationControl
    ) throws {
        let cache = KeyCache()
        try forEachRecord(from: sequence, in: txn) { _, record in try body(try decode(record, in: txn, cache: cache)) }
    }

    /// One stream's events, in stream order: O(events in the stream), whatever the ledger's size.
    public func events(of stream: StreamID, in txn: some Transaction) throws -> [EventEnvelope] {
        try events(of: stream, recordedThrough: .max, in: txn)
    }

    /// One stream's events recorded at or before `time`, in stream order: the later ones are
    /// not read (recorded-at never decreases along the sequence, so a binary search bounds them).
    public func events(of stream: StreamID, recordedThrough time: Int64, in txn: some Transaction) throws -> [EventEnvelope] {
        let bound = time == .max ? nil : try firstSequence(recordedAtOrAfter: time + 1, in: txn)
        var sequences: [UInt64] = []
        try txn.forEach(streams, prefix: Self.streamPrefix(stream)) { _, value in
            let sequence = try BigEndianUInt64(decoding: value).value
            if let bound, sequence >= bound { return .stop }
            sequences.append(sequence)
            return .continue
        }
        return try envelopes(at: sequences, in: txn)
    }

    /// A stream's last `limit` events, in stream order, and how many it holds in all: O(limit),
    /// however long the stream (a page of an account's history).
    public func events(of stream: StreamID, last limit: Int, in txn: some Transaction) throws -> (
        events: [EventEnvelope], total: UInt64
    ) {
        let total = try version(of: stream, in: txn)
        guard total > 0, limit > 0 else { return ([], total) }
        let first = total > UInt64(limit) ? total - UInt64(limit) + 1 : 1
        let prefix = Self.streamPrefix(stream)
        var sequences: [UInt64] = []
        sequences.reserveCapacity(Int(total - first + 1))
        try txn.forEach(streams, from: Self.streamKey(stream, first)) { key, value in
            guard key.starts(with: prefix) else { return .stop }
            sequences.append(try BigEndianUInt64(decoding: value).value)
            return .continue
        }
        return (try envelopes(at: sequences, in: txn), total)
    }

    private func envelopes(at sequences: [UInt64], in txn: some Transaction) throws -> [EventEnvelope] {
        let cache = KeyCache()
        return try sequences.map { sequence in
            guard let envelope = try envelope(at: sequence, in: txn, cache: cache) else { throw LedgerError.missingEvent(sequence) }
            return envelope
        }
    }

    /// The first sequence whose event was recorded at or after `time` (binary search: recorded-at
    /// never decreases along the sequence), or `nil` if none.
    public func firstSequence(recordedAtOrAfter time: Int64, in txn: some Transaction) throws -> UInt64? {
        let last = try head(in: txn).sequence
        var low: UInt64 = 1
        var high = last + 1
        while low < high {
            let middle = low + (high - low) / 2
            let recordedAt = try txn.withValue(events, forKey: BigEndianUInt64(middle)) { record in
                guard let record else { throw LedgerError.missingEvent(middle) }
                return try RecordFormat.recordedAt(of: record)
            }
            if recordedAt < time { low = middle + 1 } else { high = middle }
        }
        return low <= last ? low : nil
    }
}

public enum LedgerError: Error, Equatable, CustomStringConvertible {
    case wrongExpectedVersion(stream: StreamID, expected: ExpectedVersion, actual: UInt64)
    case missingEvent(UInt64)

    public var description: String {
        switch self {
        case .wrongExpectedVersion(let stream, let expected, let actual):
            "stream \(stream) is at version \(actual), expected \(expected)"
        case .missingEvent(let sequence):
            "the stream index points at event \(sequence), which is not in the ledger"
        }
    }
}
