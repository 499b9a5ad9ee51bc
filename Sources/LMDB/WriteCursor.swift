import CLMDB

/// A cursor that writes. Puts through one cursor skip most of the tree's descent when they come
/// in key order: LMDB first looks in the leaf page the cursor is on, and an append goes to the
/// last page without searching. Valid only inside `WriteTransaction.withWriteCursor`.
public struct WriteCursor<Key: ByteEncodable, Value> {
    let handle: OpaquePointer
    let transaction: WriteTransaction

    public func put(_ key: Key, _ value: some ByteEncodable, options: WriteTransaction.PutOptions = []) throws {
        try transaction.put(through: handle, key, value, options: options)
    }

    /// A put whose key is given as it is stored (a valid encoding of `Key`), not copied.
    public func put(encodedKey key: UnsafeRawBufferPointer, _ value: some ByteEncodable, options: WriteTransaction.PutOptions = []) throws {
        try transaction.put(through: handle, key, value, options: options)
    }
}

@available(*, unavailable)
extension WriteCursor: Sendable {}

extension WriteTransaction {
    /// Runs `body` with a writing cursor on `database`; the cursor is closed when `body` returns.
    public func withWriteCursor<K, V, R>(_ database: Database<K, V>, _ body: (WriteCursor<K, V>) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.handle, &cursor))
        defer { mdb_cursor_close(cursor) }
        return try body(WriteCursor(handle: cursor!, transaction: self))
    }
}
