import Crypto
import HearthCrypto
import HearthDomain
import LMDB

/// Each stream's data key, in `ledger.keys` beside the chain and never in it. An entry is keyed
/// by the sequence number of its stream's first event and a generation (both big-endian), and
/// holds the 256-bit key wrapped (AES-256-GCM) under the data directory's ledger key, or
/// nothing once destroyed. A stream's key is made with its first sealed event, almost always
/// its first event, so new keys sort after every other and the table is appended to: one page
/// per commit, not one per new account, as keying by the stream's name did.
///
/// A wrapped key is bound to its entry (`KeyBinding`): moved to another, it does not open.
/// Destroying a key keeps its entry, empty, so a key made later for the same stream (a uid
/// created again: the next generation) never opens what the destroyed one sealed, and the
/// audit can tell a destroyed key from one never made. Records name their key by stream and
/// generation; the stream index gives the stream's first sequence.
public struct StreamKeys: Sendable {
    package let table: Database<[UInt8], [UInt8]>
    /// The ledger's stream index and records, where a stream's first event is found.
    let streams: Database<[UInt8], BigEndianUInt64>
    let events: Database<BigEndianUInt64, [UInt8]>
    /// The ledger key; `nil` only for a reader of a ledger that never sealed anything.
    let ledgerKey: [UInt8]?

    static let tableName = "ledger.keys"
    static let wrappedSize = AES256GCMKey.keySize + AES256GCMKey.overhead
    static let entryKeySize = 16

    /// A short name of the ledger key (16 hex digits of a hash of it, under a label of its own),
    /// which a cluster's nodes compare: a follower whose ledger key is not its leader's could open
    /// none of what it receives. `nil` without a ledger key.
    public var ledgerKeyFingerprint: String? {
        guard let ledgerKey else { return nil }
        var hasher = SHA256()
        hasher.update(data: Array("hearth ledger key fingerprint".utf8))
        hasher.update(data: ledgerKey)
        return String(hex(hasher.finalize()).prefix(16))
    }

    /// The key new records of a stream are sealed with, and its generation.
    typealias SealingKey = (generation: UInt64, key: AES256GCMKey)
    /// The same, with the stream whose key it is.
    typealias OwnedSealingKey = (owner: StreamID, generation: UInt64, key: AES256GCMKey)

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

        /// Forgets the last key and hands back its cipher context if nothing else holds it, to
        /// be set to the next key (a rebuild unwraps one per account: no context to allocate
        /// and free each time).
        fileprivate func takeSpare() -> AES256GCMKey? {
            var spare: AES256GCMKey?
            if case .key(let key)? = last?.lookup { spare = key }
            last = nil
            return isKnownUniquelyReferenced(&spare) ? spare : nil
        }
    }

    /// The key of `owner` that sealed with `generation`.
    /// `firstSequence`: the owner's first event's, when the caller knows it.
    func key(for owner: StreamID, generation: UInt64, firstSequence known: UInt64?, in txn: some Transaction, cache: ReadCache) throws
        -> Lookup
    {
        if let last = cache.last, last.generation == generation, last.owner == owner { return last.lookup }
        let spare = cache.takeSpare()
        guard let first = try known ?? firstSequence(of: owner, in: txn) else { throw LedgerKeyError.missingStreamKey(owner) }
        // The entry's key on the stack: a rebuild looks one up per account.
        let found = try withUnsafeBytes(of: (first.bigEndian, generation.bigEndian)) { entry in
            try txn.withValue(nearTheLast: table, rawKey: entry) { value -> Lookup? in
                guard let value else { return nil }
                guard !value.isEmpty else { return .destroyed }
                let cipher = try ledgerCipher(&cache.ledgerCipher)
                return .key(try unwrap(value, .entry(first: first, generation: generation), of: owner, with: cipher, into: spare))
            }
        }
        let lookup: Lookup
        if let found {
            lookup = found
        } else if let latest = try latest(at: first, in: txn), latest.generation > generation {
            // Entries moved from the layout keyed by name kept only their latest generation.
            lookup = .destroyed
        } else {
            lookup = try legacyKey(for: owner, generation: generation, in: txn, cache: cache)
        }
        cache.last = (owner, generation, lookup)
        return lookup
    }

    /// The keys one write job has opened or made, so that a job appending to a stream several
    /// times (a sign-up: created, signed in, token issued) unwraps its key once. Lives no
    /// longer than the job: a rolled-back key must not outlive it. A job touches a stream or
    /// two: a short list searched in order costs less than hashing stream names.
    public final class Cache {
        /// The job's first key, held inline: a sign-up's one key makes no array.
        private var first: OwnedSealingKey?
        private var more: [OwnedSealingKey] = []
        public init() {}

        fileprivate subscript(owner: StreamID) -> SealingKey? {
            if let first, first.owner == owner { return (first.generation, first.key) }
            for entry in more where entry.owner == owner { return (entry.generation, entry.key) }
            return nil
        }

        fileprivate func remove(_ owner: StreamID) {
            if let first, first.owner == owner { self.first = nil }
            more.removeAll { $0.owner == owner }
        }

        /// Adds the key of an owner the cache does not hold (it was just looked for).
        fileprivate func insert(_ owner: StreamID, _ found: SealingKey) {
            guard first != nil else {
                first = (owner, found.generation, found.key)
                return
            }
            if more.count >= 15 { more.removeFirst() }
            more.append((owner, found.generation, found.key))
        }
    }

    /// The key new records of `owner` are sealed with, and its generation: the live one, or a
    /// new one (the stream's first sealed event, or its first after its key was destroyed);
    /// `nil` when `owner` has no events. `firstSequence`: the owner's first event's sequence
    /// when the caller knows it (the stream's first event is being appended); otherwise the
    /// stream index tells.
    func sealingKey(for owner: StreamID, firstSequence known: UInt64?, in txn: WriteTransaction, cache: Cache) throws
        -> SealingKey?
    {
        if let cached = cache[owner] { return cached }
        guard let first = try known ?? firstSequence(of: owner, in: txn) else { return nil }
        let ledgerCipher = try writerCipher(txn)
        // A stream whose first event is being appended has no key yet: none is keyed by a
        // sequence that did not exist.
        let latest = known == nil ? try latest(at: first, in: txn) : nil
        let found: SealingKey
        if let latest, let wrapped = latest.wrapped {
            let binding = KeyBinding.entry(first: first, generation: latest.generation)
            found = (latest.generation, try unwrap(wrapped, binding, of: owner, with: ledgerCipher))
        } else {
            let generation = (latest?.generation ?? 0) + 1
            // The new key and its wrapped form on the stack, the key wiped as it goes.
            let made = try withUnsafeTemporaryAllocation(byteCount: AES256GCMKey.keySize + Self.wrappedSize, alignment: 16) {
                buffer in
                defer { buffer.initializeMemory(as: UInt8.self, repeating: 0) }
                let fresh = UnsafeMutableRawBufferPointer(rebasing: buffer[..<AES256GCMKey.keySize])
                let wrapped = UnsafeMutableRawBufferPointer(rebasing: buffer[AES256GCMKey.keySize...])
                SecureRandom.fill(fresh)
                try KeyBinding.entry(first: first, generation: generation).withBytes {
                    ledgerCipher.seal(UnsafeRawBufferPointer(fresh), authenticating: $0, into: wrapped)
                }
                let entry = UnsafeRawBufferPointer(wrapped)
                // The entry's key (`entryKey`), on the stack.
                try withUnsafeBytes(of: (first.bigEndian, generation.bigEndian)) { key in
                    // A stream made in this append has the highest first sequence of all: its key goes last.
                    do {
                        try txn.putBytes(table, rawKey: key, entry, options: known == nil ? [] : .append)
                    } catch let error as LMDBError where error == .keyExists {
                        try txn.putBytes(table, rawKey: key, entry)
                    }
                }
                return try AES256GCMKey(UnsafeRawBufferPointer(fresh))
            }
            found = (generation, made)
        }
        cache.insert(owner, found)
        return found
    }

    /// Destroys `owner`'s key, keeping its entry (empty); nothing if it has no live one.
    func destroy(_ owner: StreamID, in txn: WriteTransaction, cache: Cache? = nil) throws {
        cache?.remove(owner)
        guard let first = try firstSequence(of: owner, in: txn), let latest = try latest(at: first, in: txn), latest.wrapped != nil
        else { return }
        try txn.put(table, Self.entryKey(first, latest.generation), [])
    }

    /// A stream's key, as the audit asks: never made, live, or destroyed (at its generation).
    public enum State: Equatable, Sendable {
        case none
        case live(generation: UInt64)
        case destroyed(generation: UInt64)
    }

    public func state(of owner: StreamID, in txn: some Transaction) throws -> State {
        if let first = try firstSequence(of: owner, in: txn), let latest = try latest(at: first, in: txn) {
            return latest.wrapped == nil ? .destroyed(generation: latest.generation) : .live(generation: latest.generation)
        }
        return try txn.withValue(table, forKey: Self.legacyKey(owner)) { value in
            guard let value else { return .none }
            var reader = ByteReader(value)
            let generation = try reader.readVarint()
            return reader.isAtEnd ? .destroyed(generation: generation) : .live(generation: generation)
        }
    }

    public func counts(in txn: some Transaction) throws -> Counts {
        var counts = Counts(live: 0, destroyed: 0, bytes: try txn.bytes(table))
        try txn.forEach(table) { key, value in
            let live = Self.isEntryKey(key) ? !value.isEmpty : value.count > Self.wrappedSize
            if live { counts.live += 1 } else { counts.destroyed += 1 }
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
            if Self.isEntryKey(key) {
                guard !value.isEmpty else { return .continue }
                var reader = ByteReader(key)
                let first = try reader.readBigEndianUInt64()
                let generation = try reader.readBigEndianUInt64()
                let binding = KeyBinding.entry(first: first, generation: generation)
                _ = try unwrap(value, binding, of: try stream(beginningAt: first, in: txn), with: try ledgerCipher(&cipher))
            } else {
                guard value.count > Self.wrappedSize else { return .continue }
                let name = String(decoding: key, as: UTF8.self)
                guard let owner = StreamID(name) else { throw LedgerKeyError.damagedKeyTable(entry: name) }
                var reader = ByteReader(value)
                let generation = try reader.readVarint()
                let wrapped = try reader.readRaw(reader.remaining)
                _ = try unwrap(wrapped, .named(owner, generation: generation), of: owner, with: try ledgerCipher(&cipher))
            }
            opened += 1
            return .continue
        }
        return opened
    }

    /// Whether any stream ever had a key: such a ledger can not be read without the ledger key.
    public func isEmpty(in txn: some Transaction) throws -> Bool { try txn.count(table) == 0 }

    /// Moves up to `limit` entries of the layout keyed by stream name (what Hearth wrote before
    /// keys were appended) to the layout keyed by first sequence; returns how many it moved.
    /// Each live key is wrapped again, bound to its new entry; a destroyed one moves empty.
    /// Whether any entry is still keyed by stream name (a cheap read, before a writer moves them).
    public func holdsLegacyEntries(in txn: some Transaction) throws -> Bool {
        var found = false
        try txn.forEach(table, from: [0x01]) { _, _ in
            found = true
            return .stop
        }
        return found
    }

    public func moveLegacyEntries(limit: Int, in txn: WriteTransaction) throws -> Int {
        var legacy: [(name: [UInt8], value: [UInt8])] = []
        try txn.forEach(table, from: [0x01]) { key, value in
            legacy.append((Array(key), Array(value)))
            return legacy.count < limit ? .continue : .stop
        }
        for entry in legacy {
            let name = String(decoding: entry.name, as: UTF8.self)
            guard let owner = StreamID(name), let first = try firstSequence(of: owner, in: txn) else {
                throw LedgerKeyError.damagedKeyTable(entry: name)
            }
            let (generation, wrapped) = try entry.value.withUnsafeBytes { value in
                var reader = ByteReader(value)
                return (try reader.readVarint(), Array(try reader.readRaw(reader.remaining)))
            }
            var moved: [UInt8] = []
            if !wrapped.isEmpty {
                let cipher = try writerCipher(txn)
                moved = try rewrap(
                    wrapped, from: .named(owner, generation: generation), to: .entry(first: first, generation: generation), of: owner,
                    with: cipher)
            }
            try txn.put(table, Self.entryKey(first, generation), moved)
            _ = try txn.delete(table, entry.name)
        }
        return legacy.count
    }

    // MARK: - The table's layout

    static func entryKey(_ first: UInt64, _ generation: UInt64) -> [UInt8] {
        var key = [UInt8]()
        key.reserveCapacity(entryKeySize)
        withUnsafeBytes(of: first.bigEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: generation.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// Entries keyed by first sequence begin with a zero byte (no ledger holds 2^56 events);
    /// those keyed by stream name, with a letter.
    static func isEntryKey(_ key: UnsafeRawBufferPointer) -> Bool { key.count == entryKeySize && key[0] == 0 }

    /// What every entry of the stream whose first event is `first` begins with.
    static func entryPrefix(_ first: UInt64) -> [UInt8] { withUnsafeBytes(of: first.bigEndian) { Array($0) } }

    /// The first sequence an entry key names.
    static func firstSequence(ofEntry key: some Collection<UInt8>) -> UInt64 { key.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }

    static func legacyKey(_ owner: StreamID) -> [UInt8] { StreamName(owner).bytes }

    /// The stream whose first event is `first` (named in errors only).
    private func stream(beginningAt first: UInt64, in txn: some Transaction) throws -> StreamID {
        try txn.withValue(events, forKey: BigEndianUInt64(first)) { record in
            guard let record else { throw LedgerKeyError.damagedKeyTable(entry: "first event \(first)") }
            return try RecordFormat.place(of: record).stream
        }
    }

    /// The sequence of `owner`'s first event, if it has one.
    func firstSequence(of owner: StreamID, in txn: some Transaction) throws -> UInt64? {
        try txn.withValue(streams, forKey: Ledger.streamKey(owner, 1)) { value in
            try value.map { try BigEndianUInt64(decoding: $0).value }
        }
    }

    /// The last generation made for the stream whose first event is `first`, and its wrapped
    /// key unless destroyed.
    private func latest(at first: UInt64, in txn: some Transaction) throws -> (generation: UInt64, wrapped: [UInt8]?)? {
        try txn.withCursor(table) { cursor in
            guard let (key, value) = try cursor.seek(atMost: Self.entryKey(first, .max)), Self.isEntryKey(key) else { return nil }
            var reader = ByteReader(key)
            guard try reader.readBigEndianUInt64() == first else { return nil }
            return (try reader.readBigEndianUInt64(), value.isEmpty ? nil : Array(value))
        }
    }

    /// A key of the layout keyed by stream name: `varint generation | wrapped key`, or only the
    /// generation once destroyed. Read until a writer has moved the entries.
    private func legacyKey(for owner: StreamID, generation: UInt64, in txn: some Transaction, cache: ReadCache) throws -> Lookup {
        try txn.withValue(table, forKey: Self.legacyKey(owner)) { value in
            guard let value else { throw LedgerKeyError.missingStreamKey(owner) }
            var reader = ByteReader(value)
            let stored = try reader.readVarint()
            guard stored == generation, !reader.isAtEnd else {
                guard generation <= stored else { throw LedgerKeyError.missingStreamKey(owner) }
                return .destroyed
            }
            let wrapped = try reader.readRaw(reader.remaining)
            let cipher = try ledgerCipher(&cache.ledgerCipher)
            return .key(try unwrap(wrapped, .named(owner, generation: generation), of: owner, with: cipher))
        }
    }

    // MARK: - Wrapping

    /// The ledger key set up for the writer: once per write transaction (a batch of jobs).
    private final class WriterCipher {
        let cipher: AES256GCMKey
        init(_ cipher: AES256GCMKey) { self.cipher = cipher }
    }

    private func writerCipher(_ txn: WriteTransaction) throws -> AES256GCMKey {
        try txn.kept { () throws -> WriterCipher in
            guard let ledgerKey else { throw LedgerKeyError.noLedgerKey }
            return WriterCipher(try AES256GCMKey(ledgerKey))
        }.cipher
    }

    /// The ledger key, set up the first time a run of reads needs it.
    func ledgerCipher(_ held: inout AES256GCMKey?) throws -> AES256GCMKey {
        if let held { return held }
        guard let ledgerKey else { throw LedgerKeyError.noLedgerKey }
        let cipher = try AES256GCMKey(ledgerKey)
        held = cipher
        return cipher
    }

    /// What a wrapped key is bound to (its associated data), so that moved to another entry
    /// it does not open. `entry`: `"hearth stream key v2" | u64 first | u64 generation`, for
    /// the table keyed by first sequence. `named`: `string "hearth stream key v1" | string
    /// streamName | varint generation`, for the layout keyed by stream name.
    enum KeyBinding {
        case entry(first: UInt64, generation: UInt64)
        case named(StreamID, generation: UInt64)

        func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
            switch self {
            case .entry(let first, let generation):
                var bytes = (
                    UInt64(0x6865_6172_7468_2073).bigEndian, UInt64(0x7472_6561_6d20_6b65).bigEndian,
                    UInt64(0x7920_7632_0000_0000).bigEndian, first.bigEndian, generation.bigEndian
                )
                // "hearth stream key v2" is 20 bytes: the label's last word is padded with zeros.
                return try withUnsafeBytes(of: &bytes) { try body($0) }
            case .named(let owner, let generation):
                var context = ByteWriter(capacity: 96)
                context.write("hearth stream key v1")
                context.write(owner.description)
                context.write(varint: generation)
                return try context.bytes.withUnsafeBytes { try body($0) }
            }
        }
    }

    private func unwrap(
        _ wrapped: [UInt8], _ binding: KeyBinding, of owner: @autoclosure () throws -> StreamID, with ledgerCipher: AES256GCMKey
    ) throws -> AES256GCMKey {
        try wrapped.withUnsafeBytes { try unwrap($0, binding, of: try owner(), with: ledgerCipher) }
    }

    /// The key `wrapped` holds, set up in `spare` if given (its context re-keyed, not made anew).
    /// `owner` names the stream in the error when it does not open.
    private func unwrap(
        _ wrapped: UnsafeRawBufferPointer, _ binding: KeyBinding, of owner: @autoclosure () throws -> StreamID,
        with ledgerCipher: AES256GCMKey, into spare: AES256GCMKey? = nil
    ) throws -> AES256GCMKey {
        guard wrapped.count == Self.wrappedSize else { throw LedgerKeyError.unreadableStreamKey(try owner()) }
        do {
            return try binding.withBytes { context in
                try ledgerCipher.openOnStack(wrapped, authenticating: context) { key in
                    guard let spare else { return try AES256GCMKey(key) }
                    try spare.rekey(key)
                    return spare
                }
            }
        } catch {
            // Another ledger key, or a damaged entry: never taken for an erased account.
            throw LedgerKeyError.unreadableStreamKey(try owner())
        }
    }

    /// `wrapped` bound to `binding` instead of `old`.
    func rewrap(_ wrapped: [UInt8], from old: KeyBinding, to binding: KeyBinding, of owner: StreamID, with ledgerCipher: AES256GCMKey)
        throws -> [UInt8]
    {
        try wrapped.withUnsafeBytes { wrapped in
            guard wrapped.count == Self.wrappedSize else { throw LedgerKeyError.unreadableStreamKey(owner) }
            do {
                return try old.withBytes { context in
                    try ledgerCipher.openOnStack(wrapped, authenticating: context) { key in
                        var rewrapped: [UInt8] = []
                        try binding.withBytes { try ledgerCipher.seal(key, authenticating: $0, appendingTo: &rewrapped) }
                        return rewrapped
                    }
                }
            } catch {
                throw LedgerKeyError.unreadableStreamKey(owner)
            }
        }
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
