import Foundation
import HearthDomain
import HearthStore
import HearthTesting
import Testing

@Suite("store: backup and restore")
struct BackupTests {
    func history(_ test: TestStore, accounts: Int, from first: Int = 0) throws {
        for index in first..<first + accounts {
            let uid = UserID("u\(index)")!
            try test.run(.createAccount(TestStore.project, uid, AccountCreated(method: .anonymous, createdAt: test.clock.now())))
            if index % 3 == 0 { try test.run(.deleteAccount(TestStore.project, uid, by: .user)) }
        }
    }

    @Test func aRestoredBackupHasTheSameLedgerAndProjections() throws {
        let test = try TestStore(label: "backup")
        try history(test, accounts: 50)
        try "key material".write(toFile: test.directory.path + "/secrets-key", atomically: false, encoding: .utf8)
        let target = TemporaryDirectory("backup-target")
        let files = try test.store.backUp(into: target.path + "/copy")
        #expect(files.map(\.name) == ["data.mdb", "secrets-key"])
        // Written after the backup: not in it.
        try history(test, accounts: 5, from: 50)

        let restoredDirectory = TemporaryDirectory("restored")
        let restored = try DataDirectory(restoredDirectory.path)
            .restore(from: DataDirectory(target.path + "/copy"), replacing: false)
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
        let backup = DataDirectory(target.path)
        // The test's store holds its directory, as a daemon would.
        #expect(throws: DataDirectoryLockError.self) {
            _ = try test.dataDirectory.restore(from: backup, replacing: true)
        }
        let digest = try test.store.maintenance.digest()
        try test.close()
        #expect(throws: StoreError.restoreTargetHoldsLedger(directory: test.directory.path)) {
            _ = try test.dataDirectory.restore(from: backup, replacing: false)
        }
        let replaced = try test.dataDirectory.restore(from: backup, replacing: true)
        defer { replaced.close() }
        #expect(try replaced.maintenance.digest() == digest)
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
