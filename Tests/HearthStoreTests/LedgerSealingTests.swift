import Foundation
import HearthDomain
import HearthLedger
import HearthTesting
import LMDB
import Testing

@testable import HearthStore

/// `hearth ledger seal`: a ledger from before per-account keys, its personal data in plain
/// text, rewritten so that live accounts' data is sealed and ended accounts' data forgotten.
@Suite("store: sealing a ledger written before per-account keys")
struct LedgerSealingTests {
    static let project = TestStore.project
    static let kept = UserID("kept")!
    static let gone = UserID("gone")!

    /// A ledger as an older Hearth wrote it: one account that lives, one deleted, a used code.
    static func plainLedger() throws -> TestStore {
        let test = try TestStore(label: "plain")
        let store = test.store
        let visitor = Metadata(actor: .endUser, requestId: "r", clientIp: "198.51.100.23")
        for (uid, email, name) in [(kept, "kept-plain@seal.example", "Kept Plainly"), (gone, "gone-plain@seal.example", "Gone Plainly")] {
            try store.appendBeforeSealing(
                [
                    .accountCreated(AccountCreated(method: .password, createdAt: 1_000, email: email, displayName: name)),
                    .signInRecorded(SignInRecorded(method: .password)),
                    .profileUpdated(ProfileUpdated(photoUrl: "https://img.seal.example/\(uid).png")),
                ], to: .account(project, uid), metadata: visitor, at: 1_000)
        }
        try store.appendBeforeSealing(
            [.oobCodeIssued(OOBCodeIssued(requestType: .emailSignIn, email: "code-plain@seal.example", expiresAt: 9_000))],
            to: .oobCode(project, "c0de"), metadata: visitor, at: 2_000)
        try store.appendBeforeSealing([.oobCodeConsumed], to: .oobCode(project, "c0de"), metadata: visitor, at: 3_000)
        try store.appendBeforeSealing(
            [.accountDeleted(AccountDeleted(by: .user))], to: .account(project, gone), metadata: visitor, at: 4_000)
        return test
    }

    static func ledgerBytes(_ store: AccountStore) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try store.environment.read { txn in
            try store.ledger.forEachRecord(in: txn) { _, record in
                bytes += record
                return .continue
            }
        }
        return bytes
    }

    @Test func sealingKeepsEveryEventsPlaceSealsTheLivingAndForgetsTheEnded() throws {
        let test = try Self.plainLedger()
        #expect(try test.store.holdsUnsealedRecords())
        let before = try Self.ledgerBytes(test.store)
        #expect(bytes(before, contain: "gone-plain@seal.example") && bytes(before, contain: "198.51.100.23"))
        let head = try test.store.ledgerHead()
        let digest = try test.store.maintenance.digest()
        let keptHistory = try test.store.audit.events(of: .account(Self.project, Self.kept)).map(\.payload)
        #expect(throws: DataDirectoryLockError.self) { _ = try test.dataDirectory.sealLedger() }
        try test.close()
        // A run cut short left its staging directory: the next one starts afresh.
        try FileManager.default.createDirectory(atPath: test.directory.path + "/seal-staging", withIntermediateDirectories: false)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: test.directory.path + "/seal-staging/data.mdb"))

        var reported: [UInt64] = []
        let summary = try #require(try test.dataDirectory.sealLedger(by: "ops-alice") { written, _ in reported.append(written) })
        #expect(summary.plainRecords == head.sequence && summary.events == head.sequence)
        #expect(summary.previousHead == head && summary.head.sequence == head.sequence && summary.head.hash != head.hash)
        #expect(summary.liveKeys == 1 && summary.destroyedKeys == 2)
        #expect(summary.digest == digest)
        #expect(reported.last == head.sequence)
        #expect(!FileManager.default.fileExists(atPath: test.directory.path + "/seal-staging"))

        let sealed = try test.dataDirectory.open(as: "test")
        defer { sealed.close() }
        #expect(try !sealed.holdsUnsealedRecords())
        let verification = try sealed.audit.verify()
        #expect(verification.isIntact && verification.eventsChecked == head.sequence)
        #expect(verification.continues?.sequence == head.sequence && verification.continues?.hash == head.hash)
        #expect(verification.continues?.sealedBy == "ops-alice")
        #expect(try sealed.maintenance.digest() == digest)
        let after = try Self.ledgerBytes(sealed)
        for plain in ["kept-plain@seal.example", "gone-plain@seal.example", "Gone Plainly", "code-plain@seal.example", "198.51.100.23"] {
            #expect(!bytes(after, contain: plain), "\(plain) is still in the ledger")
        }
        // The living account reads as before; the deleted one and the used code read as erased.
        let kept = try sealed.audit.events(of: .account(Self.project, Self.kept))
        #expect(kept.map(\.payload) == keptHistory && kept.allSatisfy { !$0.isErased })
        #expect(kept.first?.metadata.clientIp == "198.51.100.23")
        let gone = try sealed.audit.events(of: .account(Self.project, Self.gone))
        #expect(gone.map(\.type.name) == ["account.created", "account.signed_in", "account.profile_updated", "account.deleted"])
        #expect(gone.dropLast().allSatisfy { $0.isErased })
        #expect(try sealed.audit.events(of: .oobCode(Self.project, "c0de")).first?.isErased == true)
        sealed.close()
        #expect(try test.dataDirectory.sealLedger() == nil)
    }

    /// A ledger upgraded in place, as most are: plain records, then sealed ones a newer Hearth
    /// wrote on top. A plain account changed after the upgrade (its first sealed event makes its
    /// key), an account created and erased after it, and a uid deleted in plain text and created
    /// again. Until sealed, `audit verify` counts the plain events and an erasure can not reach
    /// them; once sealed, nothing of the ended accounts is in the ledger, and the living read as before.
    @Test func aLedgerUpgradedInPlaceIsSealedWithWhatWasWrittenSince() throws {
        let test = try Self.plainLedger()
        let plain = try test.store.ledgerHead().sequence
        let web = Metadata(actor: .endUser, requestId: "r2", clientIp: "198.51.100.99")
        let fresh = UserID("fresh")!
        try test.run(.update(Self.project, Self.kept, AccountUpdate(profile: ProfileUpdated(displayName: "Kept Sealed"))), as: web)
        try test.run(
            .createAccount(
                Self.project, fresh, AccountCreated(method: .password, createdAt: 5_000, email: "fresh-sealed@seal.example")), as: web)
        try test.run(.eraseAccount(Self.project, fresh, reason: "ticket 7"), as: TestStore.admin)
        try test.run(
            .createAccount(
                Self.project, Self.gone, AccountCreated(method: .password, createdAt: 6_000, email: "gone-again@seal.example")),
            as: web)
        let verification = try test.store.audit.verify()
        #expect(verification.isIntact && verification.plainTextEvents == plain)
        #expect(try test.store.holdsUnsealedRecords())
        // The erasure forgot what was sealed; the plain records still hold the old account's.
        #expect(bytes(try Self.ledgerBytes(test.store), contain: "gone-plain@seal.example"))
        #expect(!bytes(try Self.ledgerBytes(test.store), contain: "fresh-sealed@seal.example"))
        let head = try test.store.ledgerHead()
        let digest = try test.store.maintenance.digest()
        let keptHistory = try test.store.audit.events(of: .account(Self.project, Self.kept)).map(\.payload)
        try test.close()

        let summary = try #require(try test.dataDirectory.sealLedger())
        #expect(summary.plainRecords == plain && summary.events == head.sequence && summary.digest == digest)
        let sealed = try test.dataDirectory.open(as: "test")
        defer { sealed.close() }
        let after = try sealed.audit.verify()
        #expect(after.isIntact && after.plainTextEvents == 0 && after.continues?.hash == head.hash)
        #expect(try sealed.maintenance.digest() == digest)
        let ledger = try Self.ledgerBytes(sealed)
        for text in [
            "kept-plain@seal.example", "Kept Plainly", "Kept Sealed", "gone-plain@seal.example", "Gone Plainly", "gone-again@seal.example",
            "fresh-sealed@seal.example", "198.51.100.23", "198.51.100.99",
        ] {
            #expect(!bytes(ledger, contain: text), "\(text) is in the sealed ledger")
        }
        let kept = try sealed.audit.events(of: .account(Self.project, Self.kept))
        #expect(kept.map(\.payload) == keptHistory && kept.allSatisfy { !$0.isErased })
        #expect(try sealed.audit.events(of: .account(Self.project, fresh)).dropLast().allSatisfy(\.isErased))
        // The uid's first account reads as erased, the one created again as it is.
        let gone = try sealed.audit.events(of: .account(Self.project, Self.gone))
        #expect(gone.prefix(4).allSatisfy { $0.isErased || $0.type.name == "account.deleted" })
        #expect(gone.last?.type.name == "account.created" && gone.last?.isErased == false)
        #expect(try sealed.read { try $0.account(Self.gone, in: Self.project)?.email } == "gone-again@seal.example")
    }

    @Test func aBrokenChainIsNotSealed() throws {
        let test = try Self.plainLedger()
        try test.close()
        let environment = try Environment(path: test.directory.path)
        let ledger = try Ledger.open(environment, ledgerKey: nil)
        try environment.writer.perform { txn in
            var record = try txn.get(ledger.events, BigEndianUInt64(2)) ?? []
            record[record.count / 2] ^= 0x01
            try txn.put(ledger.events, BigEndianUInt64(2), record)
        }
        environment.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: test.directory.path + "/data.mdb"))
        #expect(throws: StoreError.self) { _ = try test.dataDirectory.sealLedger() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: test.directory.path + "/data.mdb")) == before)
        #expect(!FileManager.default.fileExists(atPath: test.directory.path + "/seal-staging"))
    }
}
