import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct EnvironmentOptions: Sendable {
    /// Initial map size in bytes. Address space, not memory; the writer doubles it on `MDB_MAP_FULL`.
    public var mapSize: Int = 1 << 30
    /// The map never grows past this; a batch that still does not fit fails with `mapFull`.
    public var maxMapSize: Int = 1 << 40
    public var maxDatabases: UInt32 = 32
    public var maxReaders: UInt32 = 1022
    /// Commands submitted together share one transaction and one fsync, up to this many.
    public var maxBatchSize: Int = 1024
    /// No writer thread and no database creation: for tools that only read, while a daemon
    /// may be writing (LMDB allows readers in other processes).
    public var readOnly: Bool = false

    public init() {}
}

/// One LMDB environment (a directory holding `data.mdb` and `lock.mdb`), opened once per process.
///
/// Reads run anywhere, in short synchronous `read` closures. Every write runs on the
/// environment's single writer thread (`writer`), which batches concurrent jobs into one
/// transaction: LMDB serializes writers anyway, and one fsync per batch is what makes
/// durable writes fast.
public final class Environment: @unchecked Sendable {
    let handle: OpaquePointer
    public let path: String
    public let options: EnvironmentOptions
    /// Shared by read transactions, exclusive while the map is resized.
    let mapLock = ReadWriteLock()
    private var writerStorage: Writer?

    /// The only place where write transactions are opened.
    public var writer: Writer {
        guard let writerStorage else { preconditionFailure("environment \(path) was opened read-only") }
        return writerStorage
    }

    public init(path: String, options: EnvironmentOptions = EnvironmentOptions()) throws {
        self.path = path
        self.options = options
        if !options.readOnly { try Self.createDirectories(path) }
        var env: OpaquePointer?
        try check(mdb_env_create(&env))
        handle = env!
        do {
            try check(mdb_env_set_maxdbs(handle, options.maxDatabases))
            try check(mdb_env_set_maxreaders(handle, options.maxReaders))
            try check(mdb_env_set_mapsize(handle, options.mapSize))
            try check(mdb_env_open(handle, path, UInt32(MDB_NOTLS), 0o600))
        } catch {
            close()  // LMDB requires closing an environment even when opening it failed
            throw error
        }
        // Readers left behind by crashed processes would pin old pages forever.
        _ = try? readerCheck()
        if !options.readOnly { writerStorage = Writer(environment: self, maxBatchSize: options.maxBatchSize) }
    }

    /// `mkdir -p`, owner-only: the data directory holds secrets' neighbours.
    public static func createDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw EnvironmentError.cannotCreateDirectory(path: current, errno: errno)
            }
        }
    }

    private let isClosed = Atomic(false)
    var isClosedNow: Bool { isClosed.load(ordering: .acquiring) }

    /// Stops the writer (after it finishes queued work) and closes the environment; once, from
    /// whichever thread calls first (a shutdown and a failing start may race).
    public func close() {
        guard isClosed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        writerStorage?.stop()
        // Once no read is in flight; reads that come later find it closed, never a freed handle.
        mapLock.withExclusive { mdb_env_close(handle) }
    }

    deinit { close() }

    /// Opens (creating if needed) a named database. Runs on the writer thread like every write;
    /// read-only environments open existing databases in a read transaction instead.
    public func openDatabase<K, V>(named name: String, key: K.Type = K.self, value: V.Type = V.self) throws
        -> Database<K, V>
    {
        guard writerStorage != nil else {
            let dbi = try mapLock.withShared { () throws(LMDBError) -> MDB_dbi in
                var txn: OpaquePointer?
                try check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn))
                var dbi = MDB_dbi()
                let code = mdb_dbi_open(txn, name, 0, &dbi)
                guard code == MDB_SUCCESS else {
                    mdb_txn_abort(txn)
                    throw LMDBError(code: code)
                }
                try check(mdb_txn_commit(txn))
                return dbi
            }
            return Database(name: name, handle: dbi)
        }
        let dbi = try writer.perform { txn -> MDB_dbi in
            var dbi = MDB_dbi()
            try check(mdb_dbi_open(txn.handle, name, UInt32(MDB_CREATE), &dbi))
            return dbi
        }
        return Database(name: name, handle: dbi)
    }

    /// Runs `body` in a read-only snapshot. Never call `await` inside; keep it short.
    @available(*, noasync, message: "LMDB transactions must not span an await; read from a synchronous function")
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        while true {
            let outcome: Result<R, any Error>? = mapLock.withShared {
                if isClosed.load(ordering: .acquiring) { return .failure(LMDBError.closed) }
                var txn: OpaquePointer?
                let code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
                if code == MDB_MAP_RESIZED { return nil }
                if code != MDB_SUCCESS { return .failure(LMDBError(code: code)) }
                let transaction = ReadTransaction(handle: txn!)
                defer {
                    transaction.closeCursors()
                    mdb_txn_abort(txn)
                }
                return Result { try body(transaction) }
            }
            if let outcome { return try outcome.get() }
            try adoptMapSizeFromOtherProcess()
        }
    }

    /// Opens the write transaction; called only by the writer thread.
    func beginWrite() throws(LMDBError) -> WriteTransaction {
        while true {
            var txn: OpaquePointer?
            let code = mdb_txn_begin(handle, nil, 0, &txn)
            if code == MDB_MAP_RESIZED {
                try adoptMapSizeFromOtherProcess()
                continue
            }
            try check(code)
            return WriteTransaction(handle: txn!)
        }
    }

    /// Another process grew the map: take its size (LMDB's documented `mapsize = 0` call).
    func adoptMapSizeFromOtherProcess() throws(LMDBError) {
        try mapLock.withExclusive { () throws(LMDBError) in
            guard !isClosed.load(ordering: .acquiring) else { throw .closed }
            try check(mdb_env_set_mapsize(handle, 0))
        }
    }

    /// Doubles the map, waiting for this process's readers to finish first. Writer thread only.
    func growMap() throws(LMDBError) {
        let current = info.mapSize
        guard current < options.maxMapSize else { throw .mapFull }
        let next = min(current * 2, options.maxMapSize)
        try mapLock.withExclusive { () throws(LMDBError) in try check(mdb_env_set_mapsize(handle, next)) }
    }

    public struct Info: Sendable {
        public let mapSize: Int
        public let lastPageNumber: Int
        public let pageSize: Int
        public let readersInUse: Int
    }

    public var info: Info {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        return Info(
            mapSize: info.me_mapsize, lastPageNumber: info.me_last_pgno, pageSize: Int(stat.ms_psize),
            readersInUse: Int(info.me_numreaders))
    }

    /// Clears reader slots of dead processes; returns how many were cleared.
    @discardableResult
    public func readerCheck() throws(LMDBError) -> Int {
        try mapLock.withShared { () throws(LMDBError) in
            guard !isClosed.load(ordering: .acquiring) else { throw .closed }
            var dead: Int32 = 0
            try check(mdb_reader_check(handle, &dead))
            return Int(dead)
        }
    }

    /// "LMDB 0.9.24: (July 24, 2019)"
    public static var version: String { String(cString: mdb_version(nil, nil, nil)) }
}

public enum EnvironmentError: Error, CustomStringConvertible {
    case cannotCreateDirectory(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let errno):
            "cannot create data directory \(path): \(String(cString: strerror(errno)))"
        }
    }
}
