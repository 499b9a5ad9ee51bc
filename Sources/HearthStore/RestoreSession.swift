import HearthDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A restore into a data directory, from the first copied byte to the swap, under the
/// directory's lock (so never beside a daemon). The backup's files are copied into a staging
/// directory and the caller verifies them there; only `commit` touches the data directory's
/// own files, and it moves them aside rather than deleting them. Until then, and whenever
/// anything fails before it, the data directory is as it was (`abandon`).
///
/// Staging and the replaced files live *inside* the data directory: the same filesystem, so
/// the swap is renames; and systemd's `StateDirectory=` gives the service user no other
/// writable place beside it (`/var/lib` is root's), nor may the directory itself be renamed.
public final class RestoreSession {
    public let directory: DataDirectory
    /// `<data>/restore-staging-<random>`: the backup's files as they will be swapped in.
    public let staging: DataDirectory
    private let lock: DataDirectoryLock
    private var open = true

    /// Takes the directory's lock (refusing, `DataDirectoryLockError.held`, while a daemon or a
    /// tool has it), finishes a swap an earlier restore was interrupted in, refuses a directory
    /// holding a ledger unless `replacing`, and creates the staging directory.
    public init(into directory: DataDirectory, replacing: Bool) throws {
        let lock = try DataDirectoryLock(directory, holder: "hearth restore")
        do {
            staging = try translatingErrors {
                try directory.finishInterruptedRestore()
                if directory.holdsLedger && !replacing { throw StoreError.restoreTargetHoldsLedger(directory: directory.path) }
                directory.removeAbandonedStaging()
                let staging = DataDirectory(directory.path + "/" + RestoreSwap.stagingPrefix + randomHex(bytes: 8))
                try DurableFiles.makeDirectory(staging.path)
                return staging
            }
        } catch {
            lock.release()
            throw error
        }
        self.directory = directory
        self.lock = lock
    }

    /// Copies `names` (the ledger and key files a backup lists) from `backup` into the staging
    /// directory, each fsynced. `progress(copied, total)` in bytes over all of them.
    public func stage(_ names: [String], from backup: String, progress: (_ copied: Int, _ total: Int) -> Void = { _, _ in })
        throws
    {
        try translatingErrors {
            let total = names.reduce(0) { $0 + (DurableFiles.size(of: backup + "/" + $1) ?? 0) }
            var done = 0
            for name in names {
                guard DataDirectory.isRestorable(name) else { throw StoreError.notRestorable(name: name) }
                try DurableFiles.copy(backup + "/" + name, to: staging.path + "/" + name) { progress(done + $0, total) }
                done += DurableFiles.size(of: staging.path + "/" + name) ?? 0
            }
            progress(total, total)
        }
    }

    /// Swaps the staged files in: a journal naming the swap is made durable first, then the
    /// ledger and key files in place are moved into `<data>/previous-<time>` and the staged
    /// ones renamed into place, and the journal removed. A crash part way leaves the journal,
    /// and the next restore or store opened for writing (the daemon's start) finishes the swap
    /// before anything reads the directory, which read-only opens refuse until then. Returns
    /// the directory that holds the replaced files, `nil` if there were none; it is kept for
    /// the operator to delete. Releases the lock.
    public func commit(at now: Int64) throws -> String? {
        precondition(open, "commit after the session ended")
        let swap = try translatingErrors {
            // The staged store was opened for verification: its reader table is no part of it.
            unlink(staging.readerTableFile)
            let swap = RestoreSwap(
                stagingName: String(staging.path.dropFirst(directory.path.count + 1)),
                previousName: directory.unusedPreviousName(at: now),
                incoming: DurableFiles.names(in: staging.path).filter(DataDirectory.isRestorable))
            try swap.record(in: directory)
            // From here the journal stands for the swap: whatever fails, the staged files stay
            // for the next writable open (or restore) to finish it, never abandoned half way.
            open = false
            defer { lock.release() }
            try swap.complete(in: directory)
            return swap
        }
        let previous = directory.path + "/" + swap.previousName
        return DurableFiles.exists(previous) ? previous : nil
    }

    /// Removes the staging directory and releases the lock: the data directory's files were
    /// never touched.
    public func abandon() {
        guard open else { return }
        open = false
        DurableFiles.removeFlatDirectory(staging.path)
        lock.release()
    }

    deinit { abandon() }
}

/// The journal of one swap, `<data>/restore-swap`: which staging directory's files go in,
/// where the replaced ones go, and which names are incoming. `complete` is idempotent, so a
/// swap cut short by a crash is finished by running it again.
struct RestoreSwap: Equatable {
    static let journalName = "restore-swap"
    static let stagingPrefix = "restore-staging-"
    static let previousPrefix = "previous-"

    let stagingName: String
    let previousName: String
    let incoming: [String]

    func record(in directory: DataDirectory) throws {
        let text = ([stagingName, previousName] + incoming).joined(separator: "\n") + "\n"
        try DurableFiles.writeAtomically(Array(text.utf8), to: directory.path + "/" + Self.journalName)
    }

    static func read(in directory: DataDirectory) throws -> RestoreSwap? {
        let path = directory.path + "/" + journalName
        guard DurableFiles.exists(path) else { return nil }
        let lines = try DurableFiles.contents(of: path).split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard lines.count >= 2, lines[0].hasPrefix(stagingPrefix), lines[1].hasPrefix(previousPrefix),
            !lines.contains(where: { $0.contains("/") }), lines.dropFirst(2).allSatisfy(DataDirectory.isRestorable)
        else { throw StoreError.unreadable("the interrupted restore's journal \(path)") }
        return RestoreSwap(stagingName: lines[0], previousName: lines[1], incoming: Array(lines.dropFirst(2)))
    }

    /// Old files aside (every ledger or key file in place that is not an incoming one already
    /// moved in), the reader table dropped, incoming files in, each directory fsynced, and
    /// only then the journal and the emptied staging directory removed.
    func complete(in directory: DataDirectory) throws {
        let staging = directory.path + "/" + stagingName
        let previous = directory.path + "/" + previousName
        let outgoing = directory.replaceableFileNames.filter {
            !incoming.contains($0) || DurableFiles.exists(staging + "/" + $0)
        }
        if !outgoing.isEmpty {
            if !DurableFiles.exists(previous) { try DurableFiles.makeDirectory(previous) }
            for name in outgoing { try DurableFiles.rename(directory.path + "/" + name, to: previous + "/" + name) }
        }
        // It describes processes of the replaced environment.
        unlink(directory.readerTableFile)
        for name in incoming where DurableFiles.exists(staging + "/" + name) {
            try DurableFiles.rename(staging + "/" + name, to: directory.path + "/" + name)
        }
        // Every incoming file must be in place before the journal goes: else the swap can not be
        // finished, and the directory must not open as an empty one.
        if let missing = incoming.first(where: { !DurableFiles.exists(directory.path + "/" + $0) }) {
            throw StoreError.unreadable(
                "the interrupted restore's \(missing) (neither in \(stagingName) nor in place; the replaced files are in \(previousName))")
        }
        if DurableFiles.exists(staging) { try DurableFiles.syncDirectory(at: staging) }
        try DurableFiles.syncDirectory(at: directory.path)
        unlink(directory.path + "/" + Self.journalName)
        // The journal's removal is durable before the staging directory goes.
        try DurableFiles.syncDirectory(at: directory.path)
        DurableFiles.removeFlatDirectory(staging)
        try DurableFiles.syncDirectory(at: directory.path)
    }
}

extension DataDirectory {
    /// The files a restore replaces: the ledger and the key files.
    var replaceableFileNames: [String] { (holdsLedger ? [Self.ledgerFileName] : []) + keyFileNames }

    /// A name a backup may bring in: the ledger or a key file, never a path.
    public static func isRestorable(_ name: String) -> Bool {
        !name.contains("/") && (name == ledgerFileName || isKeyFileName(name))
    }

    /// Whether a restore's swap was cut short here (see `RestoreSession.commit`).
    var hasInterruptedRestore: Bool { DurableFiles.exists(path + "/" + RestoreSwap.journalName) }

    /// Finishes a swap a crash interrupted; the caller holds the lock. Every file it moves in
    /// was verified before the journal was written.
    func finishInterruptedRestore() throws {
        try translatingErrors { try RestoreSwap.read(in: self)?.complete(in: self) }
    }

    /// Staging directories of restores that ended without a swap (killed while copying).
    func removeAbandonedStaging() {
        for name in DurableFiles.names(in: path) where name.hasPrefix(RestoreSwap.stagingPrefix) {
            DurableFiles.removeFlatDirectory(path + "/" + name)
        }
    }

    /// `previous-20261126T131502Z`, with `-2`, `-3`… if two restores share a second.
    func unusedPreviousName(at now: Int64) -> String {
        let stamp = Timestamp.iso8601(milliseconds: now).prefix(19).filter { $0 != "-" && $0 != ":" } + "Z"
        var name = RestoreSwap.previousPrefix + stamp
        var suffix = 2
        while DurableFiles.exists(path + "/" + name) {
            name = RestoreSwap.previousPrefix + stamp + "-\(suffix)"
            suffix += 1
        }
        return name
    }
}

private func randomHex(bytes: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<bytes).map { _ in
        let hex = String(UInt8.random(in: 0...255, using: &generator), radix: 16)
        return hex.count == 1 ? "0" + hex : hex
    }.joined()
}
