import Foundation
import HearthDomain
import HearthTesting
import Testing

@testable import HearthStore

@Suite("store: backup and restore")
struct BackupTests {
    func history(_ test: TestStore, accounts: Int, from first: Int = 0) throws {
        for index in first..<first + accounts {
            let uid = UserID("u\(index)")!
            try test.run(.createAccount(TestStore.project, uid, AccountCreated(method: .anonymous, createdAt: test.clock.now())))
            if index % 3 == 0 { try test.run(.deleteAccount(TestStore.project, uid, by: .user)) }
        }
    }

    /// What `hearth restore` does once the staged files verified: stage, swap.
    @discardableResult
    func restore(_ backup: String, into directory: DataDirectory, replacing: Bool = false) throws -> String? {
        let session = try RestoreSession(into: directory, replacing: replacing)
        try session.stage(DurableFiles.names(in: backup).filter(DataDirectory.isRestorable), from: backup)
        return try session.commit(at: 1_764_162_902_000)
    }

    /// Every name in `directory` (recursively) and its bytes, the lock file's aside.
    func contents(of directory: String) -> [String: Data] {
        var found: [String: Data] = [:]
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? [] where name != "hearth.lock" {
            found[name] = FileManager.default.contents(atPath: directory + "/" + name) ?? Data()
        }
        return found
    }

    @Test func aRestoredBackupHasTheSameLedgerAndProjections() throws {
        let test = try TestStore(label: "backup")
        try history(test, accounts: 50)
        try "key material".write(toFile: test.directory.path + "/secrets-key", atomically: false, encoding: .utf8)
        let target = TemporaryDirectory("backup-target")
        let files = try test.store.backUp(into: target.path + "/copy")
        #expect(files.map(\.name) == ["data.mdb", "ledger-key", "secrets-key"])
        // Written after the backup: not in it.
        try history(test, accounts: 5, from: 50)

        let restoredDirectory = TemporaryDirectory("restored")
        let directory = DataDirectory(restoredDirectory.path)
        #expect(try restore(target.path + "/copy", into: directory) == nil)
        #expect(DurableFiles.names(in: restoredDirectory.path) == ["data.mdb", "hearth.lock", "ledger-key", "secrets-key"])
        let restored = try directory.open(as: "test")
        defer { restored.close() }
        #expect(try restored.ledgerHead().sequence == 50 + 17)
        #expect(try restored.audit.verify().isIntact)
        #expect(try restored.account(UserID("u1")!) != nil)
        #expect(try restored.account(UserID("u3")!) == nil)
        #expect((try? String(contentsOfFile: restoredDirectory.path + "/secrets-key", encoding: .utf8)) == "key material")
        try test.close()
    }

    @Test func restoreRefusesALiveDirectoryAndAnExistingLedger() throws {
        let test = try TestStore(label: "live")
        try history(test, accounts: 3)
        let target = TemporaryDirectory("backup-target")
        _ = try test.store.backUp(into: target.path)
        // The test's store holds its directory, as a daemon would.
        #expect(throws: DataDirectoryLockError.self) {
            _ = try RestoreSession(into: test.dataDirectory, replacing: true)
        }
        let digest = try test.store.maintenance.digest()
        try test.close()
        #expect(throws: StoreError.restoreTargetHoldsLedger(directory: test.directory.path)) {
            _ = try RestoreSession(into: test.dataDirectory, replacing: false)
        }
        let previous = try restore(target.path, into: test.dataDirectory, replacing: true)
        #expect(previous == test.directory.path + "/previous-20251126T131502Z")
        let replaced = try test.dataDirectory.open(as: "test")
        defer { replaced.close() }
        #expect(try replaced.maintenance.digest() == digest)
    }

    @Test func aRestoreThatStopsBeforeItsSwapLeavesTheDirectoryAsItWas() throws {
        let live = try TestStore(label: "kept")
        try history(live, accounts: 20)
        try live.close()
        let other = try TestStore(label: "other")
        try history(other, accounts: 4)
        let target = TemporaryDirectory("backup-target")
        _ = try other.store.backUp(into: target.path)
        try other.close()

        let before = contents(of: live.directory.path)
        let session = try RestoreSession(into: live.dataDirectory, replacing: true)
        try session.stage(["data.mdb"], from: target.path)
        #expect(DurableFiles.exists(session.staging.path + "/data.mdb"))
        // A name that is no ledger or key file is never copied anywhere.
        #expect(throws: StoreError.notRestorable(name: "../escape")) { try session.stage(["../escape"], from: target.path) }
        session.abandon()
        #expect(contents(of: live.directory.path) == before)
        let reopened = try live.dataDirectory.open(as: "test")
        defer { reopened.close() }
        #expect(try reopened.ledgerHead().sequence == 20 + 7)
    }

    @Test func aSwapCutShortIsFinishedBeforeAnythingReadsTheDirectory() throws {
        let live = try TestStore(label: "half")
        try history(live, accounts: 20)
        try "old key".write(toFile: live.directory.path + "/signing-key-rs256.pem", atomically: false, encoding: .utf8)
        try live.close()
        let other = try TestStore(label: "incoming")
        try history(other, accounts: 4)
        let digest = try other.store.maintenance.digest()
        try other.close()

        // As a restore leaves it when killed part way through its swap: the journal written,
        // the old ledger moved aside, its signing key not yet, nothing moved in.
        let path = live.directory.path
        let oldLedger = FileManager.default.contents(atPath: path + "/data.mdb")
        try FileManager.default.createDirectory(atPath: path + "/restore-staging-0001", withIntermediateDirectories: false)
        for name in ["data.mdb", "ledger-key"] {
            try FileManager.default.copyItem(atPath: other.directory.path + "/" + name, toPath: path + "/restore-staging-0001/" + name)
        }
        try "restore-staging-0001\nprevious-1\ndata.mdb\nledger-key\n".write(
            toFile: path + "/restore-swap", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: path + "/previous-1", withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: path + "/data.mdb", toPath: path + "/previous-1/data.mdb")

        #expect(throws: StoreError.restoreInterrupted(directory: path)) { _ = try live.dataDirectory.openForReading() }
        let finished = try live.dataDirectory.open(as: "test")
        defer { finished.close() }
        #expect(try finished.maintenance.digest() == digest)
        #expect(DurableFiles.names(in: path) == ["data.mdb", "hearth.lock", "ledger-key", "lock.mdb", "previous-1"])
        #expect(DurableFiles.names(in: path + "/previous-1") == ["data.mdb", "ledger-key", "signing-key-rs256.pem"])
        #expect(FileManager.default.contents(atPath: path + "/previous-1/data.mdb") == oldLedger)
    }

    @Test func aBackupGoesOnlyIntoAnEmptyDirectory() throws {
        let test = try TestStore(label: "occupied")
        let target = TemporaryDirectory("occupied-target")
        try "mine".write(toFile: target.path + "/notes", atomically: false, encoding: .utf8)
        #expect(throws: StoreError.backupTargetNotEmpty(directory: target.path)) {
            _ = try test.store.backUp(into: target.path)
        }
        #expect((try? String(contentsOfFile: target.path + "/notes", encoding: .utf8)) == "mine")
        try test.close()
    }
}

extension AccountStore {
    fileprivate func account(_ uid: UserID) throws -> Account? {
        try read { try $0.account(uid, in: TestStore.project) }
    }
}
