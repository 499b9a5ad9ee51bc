import CLMDB

/// A position in one database. The bytes it returns are valid until the transaction ends.
public struct Cursor {
    public typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    let handle: OpaquePointer

    private func move(_ operation: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var data = MDB_val()
        let code = mdb_cursor_get(handle, &keyValue, &data, operation)
        if code == MDB_NOTFOUND { return nil }
        try check(code)
        return (
            UnsafeRawBufferPointer(start: keyValue.mv_data, count: keyValue.mv_size),
            UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
        )
    }

    public func first() throws(LMDBError) -> Entry? { try move(MDB_FIRST) }
    public func last() throws(LMDBError) -> Entry? { try move(MDB_LAST) }
    public func next() throws(LMDBError) -> Entry? { try move(MDB_NEXT) }
    public func previous() throws(LMDBError) -> Entry? { try move(MDB_PREV) }

    /// Positions at the first key >= `key`.
    public func seek(atLeast key: some ByteEncodable) throws -> Entry? {
        try key.withEncodedBytes { bytes in try move(MDB_SET_RANGE, key: bytes) }
    }

    /// Positions at the last key that is <= `key`.
    public func seek(atMost key: some ByteEncodable) throws -> Entry? {
        try key.withEncodedBytes { bytes -> Entry? in
            if let found = try move(MDB_SET_RANGE, key: bytes) {
                if found.key.elementsEqual(bytes) { return found }
                return try move(MDB_PREV)
            }
            return try move(MDB_LAST)
        }
    }
}
