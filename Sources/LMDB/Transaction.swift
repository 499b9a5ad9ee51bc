import CLMDB

/// What every LMDB transaction can do: read. A write transaction can read its own writes.
///
/// Transactions exist only inside the synchronous closures of `Environment.read` and
/// `Writer`; they are not `Sendable` and must never outlive the closure or span an `await`.
public protocol Transaction {
    var handle: OpaquePointer { get }

    /// As `withValue`, the key given as bytes whatever the database's key type (built on the
    /// stack, say); a read transaction looks the key up through a cursor it keeps on
    /// `database`, which stays on the leaf page it last read: lookups in ascending key order (a
    /// scan meeting each stream's key in turn) mostly search that page alone, not the tree.
    func withValue<K, V, R>(
        nearTheLast database: Database<K, V>, rawKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R
}

public enum IterationControl: Sendable {
    case `continue`
    case stop
}

extension Transaction {
    /// Runs `body` with the stored value's bytes (valid only inside `body`), or `nil`.
    public func withValue<K, V, R>(
        _ database: Database<K, V>, forKey key: K, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try body(try look(up: key) { mdb_get(handle, database.handle, &$0, &$1) })
    }

    public func withValue<K, V, R>(
        nearTheLast database: Database<K, V>, rawKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try body(try look(up: key) { mdb_get(handle, database.handle, &$0, &$1) })
    }

    /// `withValue(nearTheLast:rawKey:)`, the key of the database's type.
    public func withValue<K, V, R>(
        nearTheLast database: Database<K, V>, forKey key: K, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try key.withEncodedBytes { try withValue(nearTheLast: database, rawKey: $0, body) }
    }

    public func get<K, V: ByteDecodable>(_ database: Database<K, V>, _ key: K) throws -> V? {
        try withValue(database, forKey: key) { bytes in try bytes.map { try V(decoding: $0) } }
    }

    public func contains<K, V>(_ database: Database<K, V>, _ key: K) throws -> Bool {
        try withValue(database, forKey: key) { $0 != nil }
    }

    /// Number of entries in the database.
    public func count<K, V>(_ database: Database<K, V>) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, database.handle, &stat))
        return stat.ms_entries
    }

    /// Bytes of the pages `database` occupies (branch, leaf and overflow pages).
    public func bytes<K, V>(_ database: Database<K, V>) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, database.handle, &stat))
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
    }

    /// Runs `body` with a cursor on `database`; the cursor is closed when `body` returns.
    public func withCursor<K, V, R>(_ database: Database<K, V>, _ body: (Cursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.handle, &cursor))
        defer { mdb_cursor_close(cursor) }
        return try body(Cursor(handle: cursor!))
    }

    /// Visits entries in key order, starting at the first key >= `start` (or the first key).
    public func forEach<K, V>(
        _ database: Database<K, V>, from start: K? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> IterationControl
    ) throws {
        try withCursor(database) { cursor in
            var entry = try start.map { try cursor.seek(atLeast: $0) } ?? cursor.first()
            while let (key, value) = entry {
                if try body(key, value) == .stop { return }
                entry = try cursor.next()
            }
        }
    }

    /// Visits the entries whose keys start with `prefix`, in key order.
    public func forEach<K, V>(
        _ database: Database<K, V>, prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> IterationControl
    ) throws {
        guard !prefix.isEmpty else { return try forEach(database, body) }
        try withCursor(database) { cursor in
            var entry = try cursor.seek(atLeast: prefix)
            while let (key, value) = entry, key.starts(with: prefix) {
                if try body(key, value) == .stop { return }
                entry = try cursor.next()
            }
        }
    }
}

/// A read-only snapshot. Cheap; many may be open at once on any threads (`MDB_NOTLS`).
public final class ReadTransaction: Transaction {
    public let handle: OpaquePointer
    /// The cursors `withValue(nearTheLast:)` keeps, by database; closed with the transaction.
    private var lookupCursors: [(database: MDB_dbi, cursor: OpaquePointer)] = []

    init(handle: OpaquePointer) { self.handle = handle }

    public func withValue<K, V, R>(
        nearTheLast database: Database<K, V>, rawKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        let cursor = try lookupCursor(database.handle)
        return try body(try look(up: key) { mdb_cursor_get(cursor, &$0, &$1, MDB_SET) })
    }

    private func lookupCursor(_ database: MDB_dbi) throws(LMDBError) -> OpaquePointer {
        for kept in lookupCursors where kept.database == database { return kept.cursor }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database, &cursor))
        lookupCursors.append((database, cursor!))
        return cursor!
    }

    /// Closes the kept cursors: a read-only transaction's cursors are freed by no one else.
    func closeCursors() {
        for kept in lookupCursors { mdb_cursor_close(kept.cursor) }
        lookupCursors = []
    }
}

@available(*, unavailable)
extension ReadTransaction: Sendable {}

/// The single write transaction, open only on the environment's writer thread.
public final class WriteTransaction: Transaction {
    public let handle: OpaquePointer
    /// Puts and deletes so far. The writer uses it to tell a job that failed before writing
    /// (it fails alone) from one that failed half-way (its writes must be rolled back).
    public private(set) var writeCount = 0
    /// Set when any write hit `MDB_MAP_FULL`, however the error was then wrapped.
    private(set) var hitMapFull = false

    /// What the transaction's users set up once and reuse for its length, one per type (a
    /// cipher context, say): a batch of jobs pays for it once. Confined, like the transaction,
    /// to the writer thread, and gone with it.
    /// A few types at most, asked for on every record: a list searched in order, not a hash.
    @usableFromInline var keptObjects: [(type: ObjectIdentifier, object: AnyObject)] = []

    init(handle: OpaquePointer) { self.handle = handle }

    /// The object of type `T` this transaction keeps, made by `make` the first time. Inlinable,
    /// so that the caller's module specializes it: the type's identity becomes a constant.
    @inlinable
    public func kept<T: AnyObject>(_ make: () throws -> T) rethrows -> T {
        let type = ObjectIdentifier(T.self)
        for entry in keptObjects where entry.type == type { return unsafeDowncast(entry.object, to: T.self) }
        let object = try make()
        keptObjects.append((type, object))
        return object
    }

    @inline(__always)
    private func record(_ code: Int32) throws(LMDBError) {
        if code == MDB_MAP_FULL { hitMapFull = true }
        try check(code)
    }

    public struct PutOptions: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Fail with `keyExists` instead of overwriting.
        public static let noOverwrite = PutOptions(rawValue: UInt32(MDB_NOOVERWRITE))
        /// The key sorts after every existing key (fast path for sequence numbers).
        public static let append = PutOptions(rawValue: UInt32(MDB_APPEND))
    }

    public func put<K, V: ByteEncodable>(
        _ database: Database<K, V>, _ key: K, _ value: V, options: PutOptions = []
    ) throws {
        try putBytes(database, key, value, options: options)
    }

    /// Stores any encodable bytes, e.g. a prebuilt buffer for a typed database.
    public func putBytes<K, V>(
        _ database: Database<K, V>, _ key: K, _ value: some ByteEncodable, options: PutOptions = []
    ) throws {
        try write(key, value) { mdb_put(handle, database.handle, &$0, &$1, options.rawValue) }
    }

    /// `putBytes` with the key given as bytes, whatever the database's key type: a key built on
    /// the stack costs no array.
    public func putBytes<K, V>(
        _ database: Database<K, V>, rawKey key: UnsafeRawBufferPointer, _ value: some ByteEncodable, options: PutOptions = []
    ) throws {
        try write(key, value) { mdb_put(handle, database.handle, &$0, &$1, options.rawValue) }
    }

    /// A put through a cursor of this transaction (`WriteCursor`).
    func put(through cursor: OpaquePointer, _ key: some ByteEncodable, _ value: some ByteEncodable, options: PutOptions) throws {
        try write(key, value) { mdb_cursor_put(cursor, &$0, &$1, options.rawValue) }
    }

    /// One put: `put` is given the key and the value as LMDB takes them.
    @inline(__always)
    private func write(
        _ key: some ByteEncodable, _ value: some ByteEncodable, _ put: (inout MDB_val, inout MDB_val) -> Int32
    ) throws {
        writeCount += 1
        try key.withEncodedBytes { keyBytes in
            try value.withEncodedBytes { valueBytes in
                var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var data = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                try record(put(&keyValue, &data))
            }
        }
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete<K, V>(_ database: Database<K, V>, _ key: K) throws -> Bool {
        writeCount += 1
        return try key.withEncodedBytes { keyBytes in
            var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            let code = mdb_del(handle, database.handle, &keyValue, nil)
            if code == MDB_NOTFOUND { return false }
            try record(code)
            return true
        }
    }

    /// Empties the database (keeps its handle).
    public func removeAll<K, V>(_ database: Database<K, V>) throws(LMDBError) {
        writeCount += 1
        try record(mdb_drop(handle, database.handle, 0))
    }

    func commit() throws(LMDBError) {
        try record(mdb_txn_commit(handle))
    }

    func abort() {
        mdb_txn_abort(handle)
    }
}

@available(*, unavailable)
extension WriteTransaction: Sendable {}

/// The value `find` (`mdb_get`, or a cursor's `MDB_SET`) finds for `key`, or `nil`: valid until
/// the transaction ends.
private func look<K: ByteEncodable>(up key: K, _ find: (inout MDB_val, inout MDB_val) -> Int32) throws -> UnsafeRawBufferPointer? {
    try key.withEncodedBytes { keyBytes in
        var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
        var data = MDB_val()
        let code = find(&keyValue, &data)
        if code == MDB_NOTFOUND { return nil }
        try check(code)
        return UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
    }
}
