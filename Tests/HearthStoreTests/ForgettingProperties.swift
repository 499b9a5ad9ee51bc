import Foundation
import HearthDomain
import HearthLedger
import HearthTesting
import LMDB
import PropertyBased
import Testing

@testable import HearthStore

/// Forgetting by destroying a key: after any history that ends with an account's deletion,
/// none of its personal data can be read anywhere, and nothing else changed.
@Suite("store: a deleted account's personal data is forgotten, the chain still verifies")
struct ForgettingProperties {
    static let project = TestStore.project

    /// Personal data distinctive enough to grep for, one set per person.
    struct Person {
        let index: Int
        var uid: UserID { UserID("person\(index)")! }
        var email: String { "zq\(index)-mailbox@forget.example" }
        var newEmail: String { "zq\(index)-moved@forget.example" }
        var name: String { "Zelda Quark the \(index)th" }
        var photo: String { "https://img.forget.example/zq\(index).png" }
        var phone: String { "+1555867\(index)309" }
        var address: String { "203.0.113.\(100 + index)" }
        var federatedId: String { "gh-zq\(index)-4242" }
        var claims: String { #"{"zqteam":"squad-\#(index)"}"# }
        var factorName: String { "Zq\(index) pocket phone" }
        var factorPhone: String { "+1555399\(index)777" }

        /// Every value that must be gone once the account is.
        var secrets: [String] { [email, newEmail, name, photo, phone, address, federatedId, claims, factorName, factorPhone] }

        var metadata: Metadata { Metadata(actor: .endUser, actorId: uid.rawValue, requestId: "r-\(index)", clientIp: address) }
    }

    /// What a generated number stands for, on `person`: one command, or (an email-link sign-in
    /// to the person's address, a code that names no account) a code issued and used.
    static func commands(_ n: Int, _ person: Person) -> [Command] {
        guard n % 12 == 11 else { return [command(n, person)] }
        let code = "link-\(person.index)-\(n)"
        return [
            .issueOOBCode(project, codeHash: code, OOBCodeIssued(requestType: .emailSignIn, email: person.email, expiresAt: 1 << 50)),
            .consumeOOBCode(project, codeHash: code),
        ]
    }

    /// The command a generated number stands for, on `person`.
    static func command(_ n: Int, _ person: Person) -> Command {
        let hash = PasswordHash(algorithm: "SCRYPT", hash: Array(person.email.utf8.prefix(8)), salt: [UInt8(n % 256)])
        switch n % 12 {
        case 0:
            return .createAccount(
                project, person.uid,
                AccountCreated(
                    method: .federated, createdAt: 0, email: person.email, displayName: person.name, photoUrl: person.photo,
                    phoneNumber: person.phone,
                    providers: [ProviderLink(providerId: .github, federatedId: person.federatedId, email: person.email)]))
        case 1:
            return .update(project, person.uid, AccountUpdate(profile: ProfileUpdated(displayName: person.name, photoUrl: person.photo)))
        case 2:
            return .linkProvider(
                project, person.uid,
                ProviderLink(providerId: .google, federatedId: person.federatedId, email: person.email, displayName: person.name))
        case 3: return .update(project, person.uid, AccountUpdate(customClaims: .some(person.claims)))
        case 4: return .update(project, person.uid, AccountUpdate(email: n % 2 == 0 ? person.newEmail : person.email))
        case 5: return .signIn(project, person.uid, method: .password, refreshTokenHash: "t\(n)")
        case 6: return .setPassword(project, person.uid, hash, email: person.email, reason: .changed)
        case 7: return .update(project, person.uid, AccountUpdate(emailVerified: true))
        case 8:
            // A code its account never used: it ends with the account.
            return .issueOOBCode(
                project, codeHash: "code-\(person.index)-\(n)",
                OOBCodeIssued(
                    requestType: .verifyAndChangeEmail, email: person.email, uid: person.uid, newEmail: person.newEmail, expiresAt: 1 << 50)
            )
        case 10:
            // An import over the account (`allowOverwrite`), with a phone second factor: the old
            // account's key is destroyed and the new one's made in the same write.
            let factor = SecondFactor(
                enrollmentId: "mfa-\(n)", kind: .phone, displayName: person.factorName, enrolledAt: 0, sealedSecret: [],
                phoneNumber: person.factorPhone, lastUsedStep: 0)
            return .importAccount(
                project, person.uid,
                AccountCreated(method: .import, createdAt: 0, email: person.email, displayName: person.name, phoneNumber: person.phone),
                secondFactors: [factor], overwrite: true)
        default: return .update(project, person.uid, AccountUpdate(profile: ProfileUpdated(phoneNumber: person.phone)))
        }
    }

    @Test func afterAnyHistoryEndingInADeletionNothingOfTheAccountCanBeRead() async throws {
        await propertyCheck(count: 12, input: Gen.int(in: 0...1_000_000).array(of: 1...30)) { numbers in
            do {
                try Self.check(numbers)
            } catch {
                Issue.record("infrastructure error: \(error)")
            }
        }
    }

    /// The ways an account is forgotten: deleted by its user, by an admin, in a batch, or
    /// erased by an admin (the anonymous cleanup's purge: `CrashSafetyTests`, `CleanupTests`).
    static func forgetting(_ n: Int, _ person: Person) -> (command: Command, metadata: Metadata) {
        switch n % 4 {
        case 0: (.deleteAccount(project, person.uid, by: .user), person.metadata)
        case 1: (.deleteAccount(project, person.uid, by: .admin), TestStore.admin)
        case 2: (.batchDeleteAccount(project, person.uid, force: true), TestStore.admin)
        default: (.eraseAccount(project, person.uid, reason: "subject request \(n)"), TestStore.admin)
        }
    }

    static func check(_ numbers: [Int]) throws {
        let test = try TestStore(label: "forget")
        var isOpen = true
        defer { if isOpen { try? test.close() } }
        let people = (0..<3).map(Person.init)
        for person in people { try test.run(command(0, person), as: person.metadata) }
        for n in numbers {
            let person = people[(n / 10) % people.count]
            test.clock.advance(milliseconds: 1_000)
            for command in commands(n, person) { _ = try? test.run(command, as: person.metadata) }
        }
        let target = people[0]
        let others = Array(people.dropFirst())
        let before = try others.map { try history(of: $0, in: test) }
        let accountsBefore = try others.map { try test.account($0.uid.rawValue) }

        let (forget, metadata) = forgetting(numbers.last ?? 0, target)
        try test.run(forget, as: metadata)

        try expectForgotten(target, in: test)
        // Its unused codes went with it: gone from the projections, erased in the ledger.
        for n in numbers where n % 12 == 8 && (n / 10) % people.count == 0 {
            #expect(try test.store.read { try $0.oobCode("code-0-\(n)", in: project) } == nil)
            let code = try test.store.audit.events(of: .oobCode(project, "code-0-\(n)"))
            #expect(code.first.map { $0.isErased } ?? true)
        }
        // Every other account, and its history, exactly as before.
        #expect(try others.map { try history(of: $0, in: test) } == before)
        #expect(try others.map { try test.account($0.uid.rawValue) } == accountsBefore)
        #expect(try test.store.audit.verify().isIntact)
        let live = try test.store.maintenance.digest()
        try test.store.maintenance.rebuild()
        #expect(try test.store.maintenance.digest() == live)

        // Once the documented bound has passed (the daily compaction has run), not one byte of
        // it in the data file itself, freed pages included; the rest as it was.
        isOpen = false
        try test.close()
        _ = try test.dataDirectory.compact()
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: test.directory.path + "/data.mdb")))
        for secret in target.secrets { #expect(!bytes(file, contain: secret), "data.mdb holds \(secret) after compaction") }
        for other in others { #expect(bytes(file, contain: other.email) || bytes(file, contain: other.newEmail)) }
        let reopened = try test.dataDirectory.open(as: "test")
        defer { reopened.close() }
        #expect(try reopened.maintenance.digest() == live && reopened.audit.verify().isIntact)
    }

    @Test func aUidCreatedAgainGetsANewKeyThatDoesNotOpenTheOldHistory() throws {
        let test = try TestStore(label: "forget-again")
        defer { try? test.close() }
        let first = Person(index: 7)
        try test.run(Self.command(0, first), as: first.metadata)
        try test.run(.deleteAccount(Self.project, first.uid, by: .admin), as: TestStore.admin)
        try Self.expectForgotten(first, in: test)
        let again = AccountCreated(method: .admin, createdAt: 0, email: "again@forget.example", displayName: "Again")
        try test.run(.createAccount(Self.project, first.uid, again), as: TestStore.admin)
        let events = try test.store.audit.events(of: .account(Self.project, first.uid))
        #expect(events.map(\.isErased) == [true, false, false])
        #expect(events.last?.payload == .accountCreated(again))
        let key = try test.store.environment.read { try test.store.ledger.keys.state(of: .account(Self.project, first.uid), in: $0) }
        #expect(key == .live(generation: 2))
        let live = try test.store.maintenance.digest()
        try test.store.maintenance.rebuild()
        #expect(try test.store.maintenance.digest() == live)
    }

    /// The 30-day cleanup forgets an anonymous account as a deletion does: its client addresses,
    /// its only personal data, are in no record, and not in the data file once it is compacted.
    @Test func aPurgedAnonymousAccountLeavesNoAddressBehind() throws {
        let test = try TestStore(label: "forget-purge")
        var isOpen = true
        defer { if isOpen { try? test.close() } }
        try test.run(.changeProjectConfig(Self.project, ProjectConfigChange(anonymousCleanup: true)), as: TestStore.admin)
        let (purged, kept) = (Person(index: 5), Person(index: 6))
        for person in [purged, kept] {
            try test.run(
                .createAccount(Self.project, person.uid, AccountCreated(method: .anonymous, createdAt: test.clock.now())),
                as: person.metadata)
            try test.run(.signIn(Self.project, person.uid, method: "anonymous", refreshTokenHash: "r-\(person.index)"), as: person.metadata)
            test.clock.advance(days: 20)
        }
        test.clock.advance(days: 11)
        try test.run(.purgeAnonymous(Self.project, purged.uid), as: Metadata(actor: .scheduler))
        let events = try test.store.audit.events(of: .account(Self.project, purged.uid))
        #expect(
            events.map(\.type.name) == ["account.created", "account.signed_in", "account.refresh_token_issued", "account.anonymous_purged"])
        #expect(events.dropLast().allSatisfy(\.isErased) && events.allSatisfy { $0.metadata.clientIp == nil })
        #expect(try test.store.audit.events(of: .account(Self.project, kept.uid)).allSatisfy { $0.metadata.clientIp == kept.address })
        let live = try test.store.maintenance.digest()
        isOpen = false
        try test.close()
        _ = try test.dataDirectory.compact()
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: test.directory.path + "/data.mdb")))
        #expect(!bytes(file, contain: purged.address), "data.mdb holds the purged account's address")
        let reopened = try test.dataDirectory.open(as: "test")
        defer { reopened.close() }
        #expect(try reopened.audit.verify().isIntact && reopened.maintenance.digest() == live)
        try reopened.maintenance.rebuild()
        #expect(try reopened.maintenance.digest() == live)
    }

    /// The wrapped keys `ledger.keys` holds (destroyed ones hold nothing).
    static func wrappedKeys(_ store: AccountStore) throws -> Set<[UInt8]> {
        try store.environment.read { txn in
            var wrapped = Set<[UInt8]>()
            try txn.forEach(store.ledger.keys.table) { _, value in
                if !value.isEmpty { wrapped.insert(Array(value)) }
                return .continue
            }
            return wrapped
        }
    }

    /// LMDB frees a deleted account's projection pages, and the page that held its wrapped key,
    /// without zeroing them; a compaction leaves none of them in the file, and changes nothing else.
    @Test func aCompactionLeavesNoFreedPageWithTheAccountsData() throws {
        let test = try TestStore(label: "forget-compact")
        let person = Person(index: 3)
        for n in [0, 1, 2, 3, 4, 5, 6, 8, 9] { try test.run(Self.command(n, person), as: person.metadata) }
        let keysBefore = try Self.wrappedKeys(test.store)
        try test.run(.deleteAccount(Self.project, person.uid, by: .user), as: person.metadata)
        let destroyed = try #require(keysBefore.subtracting(try Self.wrappedKeys(test.store)).first)
        let digest = try test.store.maintenance.digest()
        let head = try test.store.ledgerHead()
        try test.close()
        let file = test.directory.path + "/data.mdb"
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        // Freed, not zeroed: the projections' old pages still hold the account, and the keys'
        // old page its wrapped key (which, with the ledger key, would open its history).
        #expect(bytes(before, contain: person.email))
        #expect(before.firstRange(of: destroyed) != nil)
        #expect(throws: DataDirectoryLockError.self) {
            let held = try test.dataDirectory.open(as: "daemon")
            defer { held.close() }
            _ = try test.dataDirectory.compact()
        }
        let summary = try test.dataDirectory.compact()
        #expect(summary.bytesBefore == before.count && summary.bytesAfter <= summary.bytesBefore)
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        for secret in person.secrets { #expect(!bytes(after, contain: secret), "\(secret) survived the compaction") }
        #expect(after.firstRange(of: destroyed) == nil, "the destroyed key survived the compaction")
        let reopened = try test.dataDirectory.open(as: "test")
        defer { reopened.close() }
        #expect(try reopened.maintenance.digest() == digest && reopened.ledgerHead() == head)
        #expect(try reopened.audit.verify().isIntact)
    }

    @Test func aLedgerThatSealedDataDoesNotOpenWithoutItsLedgerKey() throws {
        let test = try TestStore(label: "forget-keyless")
        try test.run(Self.command(0, Person(index: 1)), as: Person(index: 1).metadata)
        try test.close()
        try FileManager.default.removeItem(atPath: test.directory.path + "/ledger-key")
        #expect(throws: StoreError.ledgerKeyMissing(directory: test.directory.path)) { _ = try test.dataDirectory.openForReading() }
        #expect(throws: StoreError.ledgerKeyMissing(directory: test.directory.path)) { _ = try test.dataDirectory.open(as: "test") }
        #expect(!FileManager.default.fileExists(atPath: test.directory.path + "/ledger-key"))
    }

    /// The account's audit lines, as `hearth audit replay --uid` prints them.
    static func history(of person: Person, in test: TestStore) throws -> [String] {
        try test.store.audit.events(of: .account(project, person.uid)).map { try $0.jsonLine() }
    }

    /// Nothing of `person` in its replay, in any ledger record or key, or in a backup; its
    /// history keeps its shape.
    static func expectForgotten(_ person: Person, in test: TestStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let events = try test.store.audit.events(of: .account(project, person.uid))
        #expect(events.first?.type.name == "account.created", sourceLocation: sourceLocation)
        #expect(events.last.map { PersonalData.forgets($0.payload) } == true, sourceLocation: sourceLocation)
        // Every event reads as erased but those that forgot (an import over the account deleted
        // it first), which kept nothing personal.
        #expect(events.dropLast().allSatisfy { $0.isErased || PersonalData.forgets($0.payload) }, sourceLocation: sourceLocation)
        #expect(events.last?.metadata.clientIp == nil, sourceLocation: sourceLocation)
        let lines = try events.map { try $0.jsonLine() }.joined(separator: "\n")
        for secret in person.secrets { #expect(!lines.contains(secret), "replay shows \(secret)", sourceLocation: sourceLocation) }

        var stored: [UInt8] = []
        let tables: [Database<[UInt8], [UInt8]>] = try ["ledger.events", "ledger.keys"].map {
            try test.store.environment.openDatabase(named: $0)
        }
        try test.store.environment.read { txn in
            for table in tables {
                try txn.forEach(table) { key, value in
                    stored += key
                    stored += value
                    return .continue
                }
            }
        }
        for secret in person.secrets {
            #expect(!bytes(stored, contain: secret), "the ledger holds \(secret)", sourceLocation: sourceLocation)
        }

        // A backup (compacted: live pages only) taken now holds none of it either.
        let backup = TemporaryDirectory("forget-backup")
        _ = try test.store.backUp(into: backup.path)
        let copy = try [UInt8](Data(contentsOf: URL(fileURLWithPath: backup.path + "/data.mdb")))
        for secret in person.secrets {
            #expect(!bytes(copy, contain: secret), "a backup holds \(secret)", sourceLocation: sourceLocation)
        }
    }
}
