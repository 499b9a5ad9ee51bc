import HearthLedger
import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The data directory's ledger key (`DataDirectory.ledgerKeyFile`).
enum LedgerKeyFile {
    /// Reads the key. A writer of a ledger that never sealed anything creates it; a ledger that
    /// did and has no key is refused rather than read as if every account were erased.
    static func load(_ directory: DataDirectory, environment: Environment, create: Bool) throws -> [UInt8]? {
        let path = directory.ledgerKeyFile
        if let key = try contents(of: path) { return key }
        let unkeyed = try Ledger.open(environment, ledgerKey: nil)
        let unsealed = try environment.read { txn in try unkeyed.keys.isEmpty(in: txn) }
        guard unsealed else { throw StoreError.ledgerKeyMissing(directory: directory.path) }
        guard create else { return nil }
        var fresh = [UInt8](repeating: 0, count: 32)
        guard getentropy(&fresh, fresh.count) == 0 else { throw StoreError.storage("no entropy for the ledger key") }
        try DurableFiles.writeAtomically(fresh, to: path)
        return fresh
    }

    private static func contents(of path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw StoreError.storage("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var key = [UInt8](repeating: 0, count: 33)
        let count = key.withUnsafeMutableBytes { read(fd, $0.baseAddress, 33) }
        guard count == 32 else { throw StoreError.storage("\(path) is not a ledger key (32 bytes)") }
        return Array(key.prefix(32))
    }
}
