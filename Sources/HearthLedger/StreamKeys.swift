import HearthCrypto
import HearthDomain
import LMDB

/// Each stream's data key, in `ledger.keys` beside the chain and never in it: stream ->
/// generation and the 256-bit key wrapped (AES-256-GCM) under the data directory's ledger key.
/// Destroying a key keeps its generation, so a key made later for the same stream (a uid
/// created again) never opens what the destroyed one sealed, and the audit can tell a
/// destroyed key from one never made.
public struct StreamKeys: Sendable {
    let table: Database<[UInt8], [UInt8]>
    /// The ledger key; `nil` only for a reader of a ledger that never sealed anything.
    let ledgerKey: [UInt8]?

    static let tableName = "ledger.keys"
    static let wrappedSize = AES256GCMKey.keySize + AES256GCMKey.overhead

    /// A stream's key as a reader asks for it: the one that sealed a record.
    public enum Lookup {
        case key(AES256GCMKey)
        /// Destroyed, or a later generation replaced it: the record's personal data is erased.
        case destroyed
    }

    public struct Counts: Equatable, Sendable {
        public var live: Int
        public var destroyed: Int
        /// Bytes of the pages the table occupies.
        public var bytes: Int
    }

    /// What a run of reads (an audit, a rebuild's chunk, one account's history) keeps between
    /// records: the ledger key set up once, and the key it found last, so that a stream's
    /// records in a row unwrap its key once. Lives no longer than the read transaction.
    public final class ReadCache {
        fileprivate var ledgerCipher: AES256GCMKey?
        fileprivate var last: (owner: StreamID, generation: UInt64, lookup: Lookup)?
        public init() {}
    }

    /// The key of `owner` that sealed with `generation`.
    func key(for owner: StreamID, generation: UInt64, in txn: some Transaction, cache: ReadCache) throws -> Lookup {
        if let last = cache.last, last.generation == generation, last.owner == owner { return last.lookup }
        let found = try txn.withValue(table, forKey: Self.tableKey(owner)) { value -> Lookup in
            guard let value else { throw LedgerKeyError.missingStreamKey(owner) }
            var reader = ByteReader(value)
            let stored = try reader.readVarint()
            guard stored == generation, !reader.isAtEnd else {
                guard generation <= stored else { throw LedgerKeyError.missingStreamKey(owner) }
                return .destroyed
            }
            let wrapped = try reader.readRaw(reader.remaining)
            return .key(try unwrap(wrapped, owner: owner, generation: generation, with: try ledgerCipher(&cache.ledgerCipher)))
        }
        cache.last = (owner, generation, found)
        return found
    }

    /// The keys one write job has opened or made, so that a job appending to a stream several
    /// times (a sign-up: created, signed in, token issued) unwraps its key once. Lives no
    /// longer than the job: a rolled-back key must not outlive it.
    public final class Cache {
        fileprivate var keys: [StreamID: (generation: UInt64, key: AES256GCMKey)] = [:]
        fileprivate var ledgerCipher: AES256GCMKey?
        public init() {}
    }

    /// The key new records of `owner` are sealed with, and its generation: the live one, or a
    /// new one (the stream's first sealed event, or its first after its key was destroyed).
    func sealingKey(for owner: StreamID, in txn: WriteTransaction, cache: Cache) throws -> (generation: UInt64, key: AES256GCMKey) {
        if let cached = cache.keys[owner] { return cached }
        let tableKey = Self.tableKey(owner)
        let stored = try txn.withValue(table, forKey: tableKey) { value -> (generation: UInt64, key: AES256GCMKey?) in
            guard let value else { return (0, nil) }
            var reader = ByteReader(value)
            let generation = try reader.readVarint()
            guard !reader.isAtEnd else { return (generation, nil) }
            let wrapped = try reader.readRaw(reader.remaining)
            return (generation, try unwrap(wrapped, owner: owner, generation: generation, with: try ledgerCipher(&cache.ledgerCipher)))
        }
        let found: (generation: UInt64, key: AES256GCMKey)
        if let live = stored.key {
            found = (stored.generation, live)
        } else {
            let generation = stored.generation + 1
            var fresh = SecureRandom.bytes(AES256GCMKey.keySize)
            defer { wipe(&fresh) }
            var value = ByteWriter(capacity: 80)
            value.write(varint: generation)
            value.write(raw: try wrap(fresh, owner: owner, generation: generation, with: try ledgerCipher(&cache.ledgerCipher)))
            try txn.put(table, tableKey, value.bytes)
            found = (generation, try AES256GCMKey(fresh))
        }
        if cache.keys.count >= 256 { cache.keys.removeAll(keepingCapacity: true) }
        cache.keys[owner] = found
        return found
    }

    /// Destroys `owner`'s key, keeping its generation; nothing if it has none.
    func destroy(_ owner: StreamID, in txn: WriteTransaction, cache: Cache? = nil) throws {
        cache?.keys[owner] = nil
        let key = Self.tableKey(owner)
        let generation = try txn.withValue(table, forKey: key) { value -> UInt64? in
            guard let value, value.count > Self.wrappedSize else { return nil }
            var reader = ByteReader(value)
            return try reader.readVarint()
        }
        guard let generation else { return }
        var tombstone = ByteWriter(capacity: 10)
        tombstone.write(varint: generation)
        try txn.put(table, key, tombstone.bytes)
    }

    /// A stream's key, as the audit asks: never made, live, or destroyed (at its generation).
    public enum State: Equatable, Sendable {
        case none
        case live(generation: UInt64)
        case destroyed(generation: UInt64)
    }

    public func state(of owner: StreamID, in txn: some Transaction) throws -> State {
        try txn.withValue(table, forKey: Self.tableKey(owner)) { value in
            guard let value else { return .none }
            var reader = ByteReader(value)
            let generation = try reader.readVarint()
            return reader.isAtEnd ? .destroyed(generation: generation) : .live(generation: generation)
        }
    }

    public func counts(in txn: some Transaction) throws -> Counts {
        var counts = Counts(live: 0, destroyed: 0, bytes: try txn.bytes(table))
        try txn.forEach(table) { _, value in
            if value.count > Self.wrappedSize { counts.live += 1 } else { counts.destroyed += 1 }
            return .continue
        }
        return counts
    }

    /// Opens every live key with the ledger key (a restore's check that the two belong
    /// together); returns how many. Throws at the first that does not open.
    public func openAll(in txn: some Transaction) throws -> Int {
        var opened = 0
        var cipher: AES256GCMKey?
        try txn.forEach(table) { key, value in
            guard value.count > Self.wrappedSize else { return .continue }
            let name = String(decoding: key, as: UTF8.self)
            guard let owner = StreamID(name) else { throw LedgerKeyError.damagedKeyTable(entry: name) }
            var reader = ByteReader(value)
            let generation = try reader.readVarint()
            _ = try unwrap(try reader.readRaw(reader.remaining), owner: owner, generation: generation, with: try ledgerCipher(&cipher))
            opened += 1
            return .continue
        }
        return opened
    }

    /// Whether any stream ever had a key: such a ledger can not be read without the ledger key.
    public func isEmpty(in txn: some Transaction) throws -> Bool { try txn.count(table) == 0 }

    static func tableKey(_ owner: StreamID) -> [UInt8] { Array(owner.description.utf8) }

    /// The ledger key, set up the first time a job or a run of reads needs it.
    private func ledgerCipher(_ held: inout AES256GCMKey?) throws -> AES256GCMKey {
        if let held { return held }
        guard let ledgerKey else { throw LedgerKeyError.noLedgerKey }
        let cipher = try AES256GCMKey(ledgerKey)
        held = cipher
        return cipher
    }

    private func wrap(_ key: [UInt8], owner: StreamID, generation: UInt64, with ledgerCipher: AES256GCMKey) throws -> [UInt8] {
        var wrapped: [UInt8] = []
        wrapped.reserveCapacity(Self.wrappedSize)
        try key.withUnsafeBytes { key in
            try Self.wrappingContext(owner, generation).withUnsafeBytes {
                try ledgerCipher.seal(key, authenticating: $0, appendingTo: &wrapped)
            }
        }
        return wrapped
    }

    private func unwrap(_ wrapped: UnsafeRawBufferPointer, owner: StreamID, generation: UInt64, with ledgerCipher: AES256GCMKey) throws
        -> AES256GCMKey
    {
        guard wrapped.count == Self.wrappedSize else { throw LedgerKeyError.unreadableStreamKey(owner) }
        do {
            var key = try Self.wrappingContext(owner, generation).withUnsafeBytes { try ledgerCipher.open(wrapped, authenticating: $0) }
            defer { wipe(&key) }
            return try AES256GCMKey(key)
        } catch {
            // Another ledger key, or a damaged entry: never taken for an erased account.
            throw LedgerKeyError.unreadableStreamKey(owner)
        }
    }

    /// What a wrapped key is bound to: moving it to another stream or generation breaks it.
    private static func wrappingContext(_ owner: StreamID, _ generation: UInt64) -> [UInt8] {
        var context = ByteWriter(capacity: 64)
        context.write("hearth stream key v1")
        context.write(owner.description)
        context.write(varint: generation)
        return context.bytes
    }
}

public enum LedgerKeyError: Error, Equatable, CustomStringConvertible {
    /// Sealed records exist but the data directory's ledger key does not.
    case noLedgerKey
    /// A record was sealed under a key the table has no entry for.
    case missingStreamKey(StreamID)
    /// A key that the ledger key does not open: another directory's ledger key, or damage.
    case unreadableStreamKey(StreamID)
    /// A sealed section that its key does not open: the record was damaged.
    case unreadableSealedRecord(sequence: UInt64)
    /// A key table entry that names no stream.
    case damagedKeyTable(entry: String)

    public var description: String {
        switch self {
        case .noLedgerKey: "the ledger has sealed personal data but the data directory has no ledger key (ledger-key)"
        case .missingStreamKey(let stream): "no key was ever recorded for \(stream), yet a record is sealed under one"
        case .unreadableStreamKey(let stream): "the key of \(stream) does not open with this data directory's ledger key"
        case .unreadableSealedRecord(let sequence): "the personal data of event \(sequence) does not open with its key"
        case .damagedKeyTable(let entry): "the key table holds an entry for '\(entry)', which is not a stream"
        }
    }
}
