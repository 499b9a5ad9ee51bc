import HearthCrypto
import HearthDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An event as recorded: its place in the global sequence and in its stream, when, why, and
/// its link in the SHA-256 chain.
public struct EventEnvelope: Equatable, Sendable {
    public var sequence: UInt64
    public var stream: StreamID
    public var streamVersion: UInt64
    public var type: EventType
    /// Unix milliseconds; never decreases along the sequence.
    public var recordedAt: Int64
    public var metadata: Metadata
    public var payload: EventPayload
    public var previousHash: ChainHash
    public var hash: ChainHash
    /// Whether the record sealed personal data, and whether its key still opens it.
    public var personalData: PersonalDataState = .none

    public var event: Event { Event(stream, payload) }
}

/// A record's personal data (`PersonalData`): none, sealed and opened, or erased with its key
/// (the payload's personal fields then hold empty values, and the metadata no client address).
public enum PersonalDataState: Sendable, Equatable {
    case none, sealed, erased
}

/// What a projection folds from a record: where and when, and what happened.
public struct RecordedEvent: Sendable {
    public var sequence: UInt64
    public var stream: StreamID
    /// Unix milliseconds.
    public var recordedAt: Int64
    public var payload: EventPayload

    public init(sequence: UInt64, stream: StreamID, recordedAt: Int64, payload: EventPayload) {
        self.sequence = sequence
        self.stream = stream
        self.recordedAt = recordedAt
        self.payload = payload
    }

    public init(_ envelope: EventEnvelope) {
        self.init(sequence: envelope.sequence, stream: envelope.stream, recordedAt: envelope.recordedAt, payload: envelope.payload)
    }
}

/// The stored record layout, big-endian where fixed-width:
///
///     u8 format | u64 sequence | i64 recordedAt | varint streamVersion | string stream
///     | string type | varint typeVersion | metadata | bytes payload | bytes sealed (format 2)
///     | 32 previousHash | 32 hash
///
/// `hash` is SHA-256 of every byte before it, previous hash included, which chains the records.
/// Format 2 (every record written since personal data is sealed) adds `sealed`: empty, or
/// `varint keyGeneration | optional string ownerUid | 12 nonce | ciphertext | 16 tag`,
/// AES-256-GCM under the key of the record's stream, or of the account `ownerUid` names
/// (`PersonalData.keyOwner`; `StreamKeys`), with the sequence number as associated data, of
/// `optional string clientIp | personal payload part`. In format 2 the metadata's own client
/// address is always absent: sealed there, or not kept (an event that forgets, a stream no
/// key belongs to).
public enum RecordFormat {
    public static let version: UInt8 = 2
    public static let hashSize = 32
    static let headerSize = 17

    /// Finds the key that sealed a record: its stream's (`PersonalData.keyOwner`) at a generation.
    /// `firstSequence`: the sequence of the owner's first event when the record itself is it.
    public typealias KeyLookup = (_ owner: StreamID, _ generation: UInt64, _ firstSequence: UInt64?) throws -> StreamKeys.Lookup

    /// The sequence number stored inside a record.
    public static func sequence(of record: UnsafeRawBufferPointer) throws -> UInt64 {
        var reader = ByteReader(record, offset: 1)
        return try reader.readBigEndianUInt64()
    }

    public static func recordedAt(of record: UnsafeRawBufferPointer) throws -> Int64 {
        var reader = ByteReader(record, offset: 9)
        return Int64(bitPattern: try reader.readBigEndianUInt64())
    }

    /// A record's stream and its version in it, read without decoding the rest.
    public static func place(of record: UnsafeRawBufferPointer) throws -> (stream: StreamID, version: UInt64) {
        var reader = ByteReader(record, offset: headerSize)
        let version = try reader.readVarint()
        return (try readStream(&reader), version)
    }

    /// What a follower's append needs of a record, read in one pass without decoding its payload:
    /// its stream-index key (appended to `indexKeys`), whether its event forgets
    /// (`PersonalData.forgets`) or starts a term, and its stream's stored name. Throws for a type
    /// this version of Hearth does not know.
    static func appendInfo(of record: UnsafeRawBufferPointer, appendingIndexKeyTo indexKeys: inout [UInt8]) throws -> (
        forgets: Bool, startsTerm: Bool, streamName: UnsafeRawBufferPointer
    ) {
        var reader = ByteReader(record, offset: headerSize)
        let name = try readStreamIndexKey(&reader, appendingTo: &indexKeys)
        let typeName = try reader.readByteString()
        guard let version = Int(exactly: try reader.readVarint()) else {
            throw BinaryFormatError.invalid("type version", at: reader.offset)
        }
        guard let index = PayloadCodec.decoderIndex(name: typeName, version: version) else {
            throw BinaryFormatError.unknownEventType(String(decoding: typeName, as: UTF8.self), version: version)
        }
        return (PayloadCodec.forgetsByIndex[index], PayloadCodec.startsTermByIndex[index], name)
    }

    /// A stream from its stored name (`appendInfo(of:indexKey:)`).
    static func stream(named name: UnsafeRawBufferPointer) throws -> StreamID { try parseStream(name, at: headerSize) }

    /// What names a record's key, as stored (no names built): the stream's name and version,
    /// and from the sealed part, its generation and the uid of the account it belongs to when that
    /// is not the record's stream (a code's). `nil` when the record seals nothing.
    public struct KeyName {
        public var stream: UnsafeRawBufferPointer
        public var streamVersion: UInt64
        public var generation: UInt64
        public var account: UnsafeRawBufferPointer?
    }

    public static func keyName(of record: UnsafeRawBufferPointer) throws -> KeyName? {
        var reader = ByteReader(record)
        guard try reader.readByte() == version else { return nil }
        _ = try reader.readRaw(headerSize - 1)
        let streamVersion = try reader.readVarint()
        let stream = try reader.readByteString()
        _ = try reader.readByteString()
        _ = try reader.readVarint()
        _ = try reader.readByteString()
        for _ in 0..<3 { _ = try reader.readOptional { try $0.readByteString() } }
        _ = try reader.readByteString()
        let sealed = try reader.readByteString()
        guard !sealed.isEmpty else { return nil }
        var part = ByteReader(sealed)
        let generation = try part.readVarint()
        let account = try part.readOptional { try $0.readByteString() }
        return KeyName(stream: stream, streamVersion: streamVersion, generation: generation, account: account)
    }

    /// The owner of the key `name` names: the record's stream, or the account a code was issued for.
    static func keyOwner(_ name: KeyName, at offset: Int) throws -> StreamID {
        let stream = try parseStream(name.stream, at: offset)
        guard let account = name.account else { return stream }
        guard case .oobCode(let project, _) = stream, let uid = UserID(String(decoding: account, as: UTF8.self)) else {
            throw BinaryFormatError.invalid("sealed part on \(stream)", at: offset)
        }
        return .account(project, uid)
    }

    /// A record's entry in the stream index (`<stream name> 0 <version, big-endian>`), made from
    /// its stored bytes.
    static func streamIndexKey(of record: UnsafeRawBufferPointer) throws -> [UInt8] {
        var reader = ByteReader(record, offset: headerSize)
        var key: [UInt8] = []
        _ = try readStreamIndexKey(&reader, appendingTo: &key)
        return key
    }

    /// Reads a record's stream version and name (the reader at `headerSize`) and appends its
    /// stream-index key to `key`; returns the stored name.
    private static func readStreamIndexKey(_ reader: inout ByteReader, appendingTo key: inout [UInt8]) throws
        -> UnsafeRawBufferPointer
    {
        let version = try reader.readVarint()
        let name = try reader.readByteString()
        key.append(contentsOf: name)
        key.append(0)
        withUnsafeBytes(of: version.bigEndian) { key.append(contentsOf: $0) }
        return name
    }

    /// The record's own hash: its last 32 bytes.
    public static func storedHash(of record: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard record.count > headerSize + 2 * hashSize else { throw BinaryFormatError.truncated(at: record.count) }
        return UnsafeRawBufferPointer(rebasing: record[(record.count - hashSize)...])
    }

    public static func previousHash(of record: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard record.count > headerSize + 2 * hashSize else { throw BinaryFormatError.truncated(at: record.count) }
        return UnsafeRawBufferPointer(rebasing: record[(record.count - 2 * hashSize)..<(record.count - hashSize)])
    }

    /// Everything the hash covers.
    public static func hashedBytes(of record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: record[..<max(0, record.count - hashSize)])
    }

    /// Encodes a record up to (not including) its own hash. `metadata.clientIp` is written as
    /// given: the caller leaves it out where it is sealed. `sealed` `nil` writes format 1 (what
    /// Hearth wrote before sealing; tests make such ledgers).
    static func encodeUnhashed(
        sequence: UInt64, recordedAt: Int64, stream: StreamID, streamVersion: UInt64, type: EventType, payload: [UInt8],
        metadata: Metadata, sealed: [UInt8]?, previousHash: ChainHash
    ) -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        encodeUnhashed(
            into: &writer, sequence: sequence, recordedAt: recordedAt, stream: stream, streamVersion: streamVersion, type: type,
            payload: payload, metadata: metadata, sealed: sealed, previousHash: previousHash)
        return writer.bytes
    }

    /// `encodeUnhashed`, appended to `writer` (the writer's buffer reused from record to record).
    /// `omittingClientIp`: the metadata's client address is sealed, or not kept, not written here.
    static func encodeUnhashed(
        into writer: inout ByteWriter, sequence: UInt64, recordedAt: Int64, stream: StreamID, streamVersion: UInt64,
        type: EventType, payload: [UInt8], metadata: Metadata, omittingClientIp: Bool = false, sealed: [UInt8]?,
        previousHash: ChainHash
    ) {
        writer.write(sealed == nil ? 1 : version)
        writer.write(bigEndian: sequence)
        writer.write(bigEndian: UInt64(bitPattern: recordedAt))
        writer.write(varint: streamVersion)
        writer.write(stream.description)
        writer.write(type.name)
        writer.write(varint: UInt64(type.version))
        writer.write(metadata.actor.rawValue)
        writer.write(metadata.actorId)
        writer.write(metadata.requestId)
        writer.write(omittingClientIp ? nil : metadata.clientIp)
        writer.write(bytes: payload)
        if let sealed { writer.write(bytes: sealed) }
        previousHash.withBytes { writer.write(raw: $0) }
    }

    /// The sealed part of a record, appended to `writer`: `plaintext` under `key` at
    /// `generation`, bound to `sequence`.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: AES256GCMKey, generation: UInt64, owner: StreamID?, sequence: UInt64,
        into writer: inout ByteWriter
    ) {
        writer.write(varint: generation)
        if case .account(_, let uid)? = owner { writer.write(uid.rawValue as String?) } else { writer.write(nil as String?) }
        withUnsafeBytes(of: sequence.bigEndian) { sequence in
            writer.write(count: plaintext.count + AES256GCMKey.overhead) {
                key.seal(plaintext, authenticating: sequence, into: $0)
            }
        }
    }

    /// Decodes a whole record (hash not checked here; `LedgerVerifier` does that), opening its
    /// sealed part with the key `keys` finds.
    public static func decode(_ record: UnsafeRawBufferPointer, keys: KeyLookup) throws -> EventEnvelope {
        var reader = ByteReader(record)
        let head = try readHead(&reader) { try readStream(&$0) }
        var metadata = Metadata(
            actor: try reader.readEnum(), actorId: try reader.readOptionalString(),
            requestId: try reader.readOptionalString(), clientIp: try reader.readOptionalString())
        var runKey: StreamCache.RunKey?
        let content = try readContent(&reader, head, needsClientIp: true, runKey: &runKey, keys: keys)
        if content.state != .none { metadata.clientIp = content.clientIp }
        let previousHash = ChainHash(buffer: try reader.readRaw(hashSize))
        let hash = ChainHash(buffer: try reader.readRaw(hashSize))
        guard reader.isAtEnd else { throw BinaryFormatError.trailingBytes(reader.remaining) }
        return EventEnvelope(
            sequence: head.sequence, stream: head.stream, streamVersion: head.streamVersion, type: head.decoder.type,
            recordedAt: head.recordedAt, metadata: metadata, payload: content.payload, previousHash: previousHash, hash: hash,
            personalData: content.state)
    }

    /// Decodes what a projection folds, skipping the metadata strings and the hashes: the
    /// rebuild's hot path. The record's layout is still checked to its last byte. `streams`
    /// remembers the last stream read, and its key, so a run of one stream's records parses
    /// its name once (`keys` unwraps its key once, through `streams.keys`); a sealed part holding
    /// only a client address is not opened at all.
    public static func decodeRecordedEvent(_ record: UnsafeRawBufferPointer, streams: inout StreamCache, keys: KeyLookup)
        throws -> RecordedEvent
    {
        var reader = ByteReader(record)
        let head = try readHead(&reader) { try streams.stream(&$0) }
        _ = try reader.readByteString()
        for _ in 0..<3 { _ = try reader.readOptional { try $0.readByteString() } }
        let content = try readContent(&reader, head, needsClientIp: false, runKey: &streams.runKey, keys: keys)
        guard reader.remaining == 2 * hashSize else { throw BinaryFormatError.truncated(at: reader.offset) }
        return RecordedEvent(sequence: head.sequence, stream: head.stream, recordedAt: head.recordedAt, payload: content.payload)
    }

    private struct Content {
        var payload: EventPayload
        var state: PersonalDataState
        var clientIp: String?
    }

    /// The payload, and the personal part sealed after it (format 2).
    /// `runKey`: the key the run's records of `head.stream` were sealed with so far, if known;
    /// used, or set, for a record sealed under its own stream's key.
    private static func readContent(
        _ reader: inout ByteReader, _ head: Head, needsClientIp: Bool, runKey: inout StreamCache.RunKey?, keys: KeyLookup
    ) throws -> Content {
        let open = try reader.readByteString()
        let decoder = head.decoder
        guard head.format == 2 else {
            guard !decoder.sealsPersonalData else { throw BinaryFormatError.invalid("sealed type in format 1", at: reader.offset) }
            return Content(payload: try decoder.decode(open), state: .none)
        }
        let sealed = try reader.readByteString()
        guard !sealed.isEmpty else {
            guard !decoder.sealsPersonalData else { throw BinaryFormatError.invalid("missing sealed part", at: reader.offset) }
            return Content(payload: try decoder.decode(open), state: .none)
        }
        guard decoder.sealsPersonalData || needsClientIp else { return Content(payload: try decoder.decode(open), state: .sealed) }
        var part = ByteReader(sealed)
        let generation = try part.readVarint()
        var invalid: BinaryFormatError { .invalid("sealed part on \(head.stream)", at: reader.offset) }
        let lookup: StreamKeys.Lookup
        // No stream's name is copied or built but an action code's account's: a rebuild reads
        // most records here, in their stream's run.
        if let uid = try part.readOptional({ try UserID.read(from: &$0) }) {
            // An action code's, sealed under the key of the account it names.
            guard case .oobCode(let project, _) = head.stream else { throw invalid }
            lookup = try keys(.account(project, uid), generation, nil)
        } else if let run = runKey, run.generation == generation {
            // The key the run's records were sealed with (set below, on a stream that has keys).
            lookup = run.lookup
        } else {
            switch head.stream {
            case .project, .cluster: throw invalid
            case .account, .oobCode: break
            }
            // Dropped first: a reader's key cache re-keys the last key's context only if
            // nothing else holds it. A stream's first record names where its key is.
            runKey = nil
            lookup = try keys(head.stream, generation, head.streamVersion == 1 ? head.sequence : nil)
            runKey = StreamCache.RunKey(generation: generation, lookup: lookup)
        }
        guard case .key(let key) = lookup else {
            return Content(payload: try decoder.decode(open, personal: .erased), state: .erased)
        }
        guard part.remaining >= AES256GCMKey.overhead else { throw BinaryFormatError.truncated(at: reader.offset) }
        let box = try part.readRaw(part.remaining)
        do {
            return try withUnsafeBytes(of: head.sequence.bigEndian) { sequence in
                try key.openOnStack(box, authenticating: sequence) { bytes in
                    var opened = ByteReader(bytes)
                    // A rebuild folds no client address: it is read past, not made a string.
                    let clientIp: String?
                    if needsClientIp {
                        clientIp = try opened.readOptionalString()
                    } else {
                        try opened.skipOptionalString()
                        clientIp = nil
                    }
                    let rest = UnsafeRawBufferPointer(rebasing: bytes[opened.offset...])
                    guard decoder.sealsPersonalData || rest.isEmpty else { throw BinaryFormatError.trailingBytes(rest.count) }
                    let payload = try decoder.decode(open, personal: .opened(rest))
                    return Content(payload: payload, state: .sealed, clientIp: clientIp)
                }
            }
        } catch is AES256GCMError {
            throw LedgerKeyError.unreadableSealedRecord(sequence: head.sequence)
        }
    }

    /// The stream a run of records last named, and its stored bytes.
    public struct StreamCache {
        private var bytes: [UInt8] = []
        private var stream: StreamID?
        /// The keys the run's records were sealed with.
        public let keys = StreamKeys.ReadCache()
        /// The key the run's records were sealed with under their own stream's key: the next
        /// record of the run finds it here, without asking `keys` (which compares streams).
        var runKey: RunKey?

        struct RunKey {
            var generation: UInt64
            var lookup: StreamKeys.Lookup
        }

        public init() {}

        mutating func stream(_ reader: inout ByteReader) throws -> StreamID {
            let name = try reader.readByteString()
            if let stream, !name.isEmpty, name.count == bytes.count,
                bytes.withUnsafeBytes({ memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 })
            {
                return stream
            }
            let parsed = try RecordFormat.parseStream(name, at: reader.offset)
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: name)
            stream = parsed
            runKey = nil
            return parsed
        }
    }

    private struct Head {
        var format: UInt8
        var sequence: UInt64
        var recordedAt: Int64
        var streamVersion: UInt64
        var stream: StreamID
        var decoder: PayloadCodec.Decoder
    }

    private static func readHead(_ reader: inout ByteReader, stream: (inout ByteReader) throws -> StreamID) throws -> Head {
        let format = try reader.readByte()
        guard format == 1 || format == version else { throw BinaryFormatError.invalid("record format \(format)", at: 0) }
        return Head(
            format: format, sequence: try reader.readBigEndianUInt64(), recordedAt: Int64(bitPattern: try reader.readBigEndianUInt64()),
            streamVersion: try reader.readVarint(), stream: try stream(&reader), decoder: try readType(&reader))
    }

    private static func readStream(_ reader: inout ByteReader) throws -> StreamID {
        let bytes = try reader.readByteString()
        return try parseStream(bytes, at: reader.offset)
    }

    /// Parses "account/<project>/<uid>", "project/<project>", "oob/<project>/<hash>" or "cluster/<name>" from the
    /// stored bytes, without the intermediate strings a split would make (rebuild's hot path).
    private static func parseStream(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> StreamID {
        var invalid: BinaryFormatError { .invalid("stream '\(String(decoding: bytes, as: UTF8.self))'", at: offset) }
        guard let first = bytes.firstIndex(of: 0x2f) else { throw invalid }
        if UnsafeRawBufferPointer(rebasing: bytes[..<first]).elementsEqual("cluster".utf8) {
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(first + 1)...]), as: UTF8.self)
            guard let stream = ClusterStream(rawValue: name) else { throw invalid }
            return .cluster(stream)
        }
        let rest = bytes[(first + 1)...]
        let second = rest.firstIndex(of: 0x2f)
        let category = UnsafeRawBufferPointer(rebasing: bytes[..<first])
        guard
            let project = ProjectID(
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(first + 1)..<(second ?? bytes.count)]), as: UTF8.self))
        else {
            throw invalid
        }
        if second == nil, category.elementsEqual("project".utf8) { return .project(project) }
        guard let second else { throw invalid }
        let id = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(second + 1)...]), as: UTF8.self)
        if category.elementsEqual("account".utf8), let uid = UserID(id) { return .account(project, uid) }
        if category.elementsEqual("oob".utf8) { return .oobCode(project, id) }
        throw invalid
    }

    /// Reads the type name and version and finds their decoder.
    private static func readType(_ reader: inout ByteReader) throws -> PayloadCodec.Decoder {
        let name = try reader.readByteString()
        guard let version = Int(exactly: try reader.readVarint()) else {
            throw BinaryFormatError.invalid("type version", at: reader.offset)
        }
        guard let decoder = PayloadCodec.decoder(name: name, version: version) else {
            throw BinaryFormatError.unknownEventType(String(decoding: name, as: UTF8.self), version: version)
        }
        return decoder
    }
}
