import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB return code other than success, with LMDB's own message.
public struct LMDBError: Error, Equatable, Hashable, CustomStringConvertible, Sendable {
    public let code: Int32

    public init(code: Int32) { self.code = code }

    public static let keyExists = LMDBError(code: MDB_KEYEXIST)
    public static let notFound = LMDBError(code: MDB_NOTFOUND)
    public static let mapFull = LMDBError(code: MDB_MAP_FULL)
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    public static let readersFull = LMDBError(code: MDB_READERS_FULL)
    public static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// A read of an environment that was closed (EBADF, as a closed descriptor answers).
    public static let closed = LMDBError(code: EBADF)

    public var description: String {
        guard let message = mdb_strerror(code) else { return "LMDB error \(code)" }
        return "LMDB error \(code): \(String(cString: message))"
    }
}

/// Turns an LMDB return code into a thrown `LMDBError`.
@inline(__always)
func check(_ code: Int32) throws(LMDBError) {
    if code != MDB_SUCCESS { throw LMDBError(code: code) }
}
