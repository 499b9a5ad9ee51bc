import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// Writes a consistent copy of the whole environment to `descriptor` (an open, empty file):
    /// one read transaction's snapshot, so it runs beside the writer, in this process or
    /// another. `compact` omits free pages and renumbers the rest (LMDB's `MDB_CP_COMPACT`),
    /// so the copy is as small as the live data. The caller fsyncs and closes the file.
    public func copy(to descriptor: Int32, compact: Bool) throws(LMDBError) {
        while true {
            let code = try mapLock.withShared { () throws(LMDBError) -> Int32 in
                guard !isClosedNow else { throw .closed }
                return mdb_env_copyfd2(handle, descriptor, compact ? UInt32(MDB_CP_COMPACT) : 0)
            }
            guard code == MDB_MAP_RESIZED else { return try check(code) }
            // The writing process grew the map past ours: take its size and start again.
            try adoptMapSizeFromOtherProcess()
            guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else { throw LMDBError(code: errno) }
        }
    }

    /// Bytes of the map in use: pages up to the last one written, free pages included.
    public var usedBytes: Int {
        let info = self.info
        return (info.lastPageNumber + 1) * info.pageSize
    }
}
