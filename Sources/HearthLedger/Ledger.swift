import Crypto
import HearthDomain
import LMDB

/// The append-only event log: `events` (global sequence -> record) and `streams`
/// (stream + stream version -> sequence). Nothing here is ever updated or deleted.
public struct Ledger: Sendable {
    public let events: Database<BigEndianUInt64, [UInt8]>
    public let streams: Database<[UInt8], BigEndianUInt64>

    public static func open(_ environment: Environment) throws -> Ledger {
        Ledger(
            events: try environment.openDatabase(named: "ledger.events"),
            streams: try environment.openDatabase(named: "ledger.streams"))
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
            guard let (_, record) = try cursor.last() else { return .genesis }
            return Head(
                sequence: try RecordFormat.sequence(of: record), hash: ChainHash(buffer: try RecordFormat.storedHash(of: record)),
                recordedAt: try RecordFormat.recordedAt(of: record))
        }
    }

    static func streamPrefix(_ stream: StreamID) -> [UInt8] {
        Array(stream.description.utf8) + [0]
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
    public func append(
        _ payloads: [EventPayload], to stream: StreamID, expecting expected: ExpectedVersion = .any,
        metadata: Metadata, at now: Int64, in txn: WriteTransaction
    ) throws -> [EventEnvelope] {
        let current = try version(of: stream, in: txn)
        guard expected.allows(current) else { throw LedgerError.wrongExpectedVersion(stream: stream, expected: expected, actual: current) }
        guard !payloads.isEmpty else { return [] }
        var head = try head(in: txn)
        // Recorded-at never goes backwards, so time filters can rely on sequence order.
        let recordedAt = max(now, head.recordedAt)
        var appended: [EventEnvelope] = []
        appended.reserveCapacity(payloads.count)
        for (offset, payload) in payloads.enumerated() {
            let sequence = head.sequence + 1
            let streamVersion = current + UInt64(offset) + 1
            var record = RecordFormat.encodeUnhashed(
                sequence: sequence, recordedAt: recordedAt, stream: stream, streamVersion: streamVersion,
                payload: payload, metadata: metadata, previousHash: head.hash)
            let hash = ChainHash(SHA256.hash(data: record))
            record.append(contentsOf: hash)
            try txn.put(events, BigEndianUInt64(sequence), record, options: .append)
            try txn.put(streams, Self.streamKey(stream, streamVersion), BigEndianUInt64(sequence), options: .noOverwrite)
            appended.append(
                EventEnvelope(
                    sequence: sequence, stream: stream, streamVersion: streamVersion, type: payload.type,
                    recordedAt: recordedAt, metadata: metadata, payload: payload, previousHash: head.hash, hash: hash))
            head = Head(sequence: sequence, hash: hash, recordedAt: recordedAt)
        }
        return appended
    }

    public func envelope(at sequence: UInt64, in txn: some Transaction) throws -> EventEnvelope? {
        try txn.withValue(events, forKey: BigEndianUInt64(sequence)) { record in
            try record.map(RecordFormat.decode)
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
        try forEachRecord(from: sequence, in: txn) { _, record in try body(try RecordFormat.decode(record)) }
    }

    /// One stream's events, in stream order: O(events in the stream), whatever the ledger's size.
    public func events(of stream: StreamID, in txn: some Transaction) throws -> [EventEnvelope] {
        var sequences: [UInt64] = []
        try txn.forEach(streams, prefix: Self.streamPrefix(stream)) { _, value in
            sequences.append(try BigEndianUInt64(decoding: value).value)
            return .continue
        }
        return try sequences.map { sequence in
            guard let envelope = try envelope(at: sequence, in: txn) else { throw LedgerError.missingEvent(sequence) }
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
