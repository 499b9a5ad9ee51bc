import HearthDomain
import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Hearth data directory and everything in it: LMDB's `data.mdb` and `lock.mdb` (the
/// ledger and its projections), `hearth.lock` (who has it open for writing) and the signing
/// keys. The only code that knows the layout, and the only way to open a store.
public struct DataDirectory: Sendable, Equatable, CustomStringConvertible {
    public let path: String

    /// Where a data directory is when none is named, relative to the working directory.
    public static let defaultPath = ".hearth/data"
    /// The environment variable that names it when the command line does not.
    public static let environmentVariable = "HEARTH_DATA_DIR"

    public init(_ path: String) { self.path = path }

    /// `explicit` (a `--data` value), else `$HEARTH_DATA_DIR`, else `.hearth/data`.
    public init(_ explicit: String?, environment: [String: String]) {
        let named = environment[Self.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        self.init(explicit ?? named ?? Self.defaultPath)
    }

    public var description: String { path }

    /// The last `hearth audit verify`'s result (`AuditVerificationRecord`).
    public var auditVerificationFile: String { path + "/audit-verification.json" }

    /// The PEM file of the signing key for `algorithm` (e.g. "rs256"), created on first start.
    public func signingKeyFile(algorithm: String) -> String {
        path + "/signing-key-\(algorithm.lowercased()).pem"
    }

    /// The PEM file of a signing key a rotation made (`hearth keys rotate`), by its kid.
    public func signingKeyFile(keyID: String) -> String {
        path + "/signing-key-\(keyID).pem"
    }

    /// The key that seals identity providers' client secrets in the ledger (32 random bytes),
    /// created when the first secret is sealed. Back it up with the ledger: without it the
    /// sealed secrets can not be read.
    public var secretsKeyFile: String { path + "/secrets-key" }

    /// LMDB's file: the ledger and its projections.
    public static let ledgerFileName = "data.mdb"
    var ledgerFile: String { path + "/" + Self.ledgerFileName }
    var lockFile: String { path + "/hearth.lock" }
    /// LMDB's reader table: never copied (it describes this machine's processes).
    var readerTableFile: String { path + "/lock.mdb" }

    /// The key that wraps every stream's data key in the ledger (32 random bytes), created with
    /// the ledger. Without it no sealed personal data can be read: back it up with the ledger.
    /// Not the secrets key: that one belongs to the auth layer, is made only when a provider
    /// secret is first sealed, and also keys the fingerprints admins see; one key per purpose
    /// keeps a rotation of either from touching the other.
    public var ledgerKeyFile: String { path + "/" + Self.ledgerKeyFileName }
    public static let ledgerKeyFileName = "ledger-key"

    /// The key files present: signing keys, the ledger key and the secrets key. A backup copies them with the
    /// ledger; without them the restored tokens would not verify and sealed secrets not open.
    public var keyFileNames: [String] { DurableFiles.names(in: path).filter(Self.isKeyFileName) }

    /// `signing-key-<algorithm>.pem`, `ledger-key` or `secrets-key`.
    public static func isKeyFileName(_ name: String) -> Bool {
        (name.hasPrefix("signing-key-") && name.hasSuffix(".pem")) || name == "secrets-key" || name == ledgerKeyFileName
    }

    /// Whether a ledger was ever written here.
    public var holdsLedger: Bool { access(ledgerFile, F_OK) == 0 }

    /// Takes the directory's lock for `holder` (refusing with `DataDirectoryLockError.held`
    /// while a daemon or a tool has it), then opens the store for writing. The store releases
    /// the lock when it closes. With `catchUp` false the projections are left for the caller
    /// to bring up to date (`maintenance.catchUp`), before it serves anything.
    public func open(as holder: String, options: AccountStore.Options = AccountStore.Options(), catchUp: Bool = true)
        throws -> AccountStore
    {
        precondition(!options.readOnly, "open(as:) is for writers; use openForReading")
        let lock = try DataDirectoryLock(self, holder: holder)
        do {
            try finishInterruptedRestore()
            return try AccountStore(directory: self, options: options, lock: lock, catchUp: catchUp)
        } catch {
            lock.release()
            throw error
        }
    }

    /// Opens an existing ledger read-only, without the lock: LMDB lets readers share the
    /// directory with a writer in another process (the audit tools beside a daemon).
    /// Refuses a directory a restore was interrupted in the middle of swapping: its files are
    /// half the old, half the backup's until a writer (the daemon's start) finishes the swap.
    public func openForReading(clock: any WallClock = SystemClock()) throws -> AccountStore {
        if hasInterruptedRestore { throw StoreError.restoreInterrupted(directory: path) }
        var options = AccountStore.Options.readOnly
        options.clock = clock
        return try AccountStore(directory: self, options: options, lock: nil, catchUp: false)
    }

    func createIfMissing() throws {
        try translatingErrors { try Environment.createDirectories(path) }
    }
}
