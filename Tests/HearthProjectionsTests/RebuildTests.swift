import HearthDomain
import HearthLedger
import HearthProjections
import HearthTesting
import LMDB
import Testing

@testable import HearthStore

@Suite("projections: live equals rebuilt")
struct RebuildTests {
    let project = TestStore.project

    /// A varied history: creations of every kind, links, unlinks, email link, sessions,
    /// claims, codes, cleanup, deletions and purges.
    static func history(_ test: TestStore) throws {
        let p = TestStore.project
        let hash = PasswordHash(algorithm: "SCRYPT", hash: [1, 2], salt: [3], memoryCost: 14, blockSize: 8, parallelization: 1)
        func uid(_ s: String) -> UserID { UserID(s)! }
        func at() -> Int64 { test.clock.now() }
        try test.run(.changeProjectConfig(p, ProjectConfigChange(anonymousCleanup: true, oneAccountPerEmail: true)), as: TestStore.admin)
        for index in 0..<20 {
            try test.run(.createAccount(p, uid("anon\(index)"), AccountCreated(method: .anonymous, createdAt: at())))
            try test.run(.signIn(p, uid("anon\(index)"), method: "anonymous", refreshTokenHash: "r-anon-\(index)"))
            test.clock.advance(milliseconds: 3_600_000)
        }
        try test.run(.setPassword(p, uid("anon1"), hash, email: "one@x.io", reason: .initial))
        try test.run(.linkProvider(p, uid("anon2"), ProviderLink(providerId: "google.com", federatedId: "g2", email: "two@gmail.com")))
        try test.run(
            .createAccount(
                p, uid("pw"), AccountCreated(method: .password, createdAt: at(), email: "pw@x.io", password: hash, phoneNumber: "+15550001")
            ))
        try test.run(.signIn(p, uid("pw"), method: "password", refreshTokenHash: "r-pw"))
        try test.run(.completeEmailLinkSignIn(p, uid("pw"), email: "pw@x.io", refreshTokenHash: "r-pw-link"))
        try test.run(
            .createAccount(
                p, uid("fed"),
                AccountCreated(
                    method: .federated, createdAt: at(), email: "fed@x.io",
                    providers: [ProviderLink(providerId: "github.com", federatedId: "gh")])))
        try test.run(.unlinkProviders(p, uid("fed"), ["github.com"]))
        try test.run(
            .update(
                p, uid("fed"),
                AccountUpdate(
                    email: "fed2@x.io", profile: ProfileUpdated(displayName: "F", phoneNumber: "+15550002"),
                    customClaims: .some(#"{"r":1}"#), revokeSessions: .since(seconds: at() / 1000))), as: TestStore.admin)
        try test.run(
            .issueOOBCode(p, codeHash: "c1", OOBCodeIssued(requestType: .emailSignIn, email: "new@x.io", expiresAt: at() + 3_600_000)))
        try test.run(.consumeOOBCode(p, codeHash: "c1"))
        try test.run(.update(p, uid("anon10"), AccountUpdate(disabled: true)), as: TestStore.admin)
        try test.run(.update(p, uid("anon10"), AccountUpdate(disabled: false)), as: TestStore.admin)
        try test.run(.deleteAccount(p, uid("anon3"), by: .user))
        try test.run(.revokeRefreshToken(p, uid("anon4"), tokenHash: "r-anon-4"))
        // Tokens an older Hearth issued (v1: found by their hash), one of them retired since.
        for token in ["r-v1-anon11", "r-v1-anon11-b"] {
            try test.store.appendAsRecorded(
                [.refreshTokenIssued(RefreshTokenIssued(tokenHash: token, namesAccount: false))], to: .account(p, uid("anon11")),
                at: at())
        }
        try test.run(.revokeRefreshToken(p, uid("anon11"), tokenHash: "r-v1-anon11-b"))
        test.clock.advance(days: 31)
        for index in 5..<9 { try test.run(.purgeAnonymous(p, uid("anon\(index)")), as: Metadata(actor: .scheduler)) }
    }

    @Test func rebuildingGivesByteIdenticalProjections() throws {
        let test = try TestStore(label: "rebuild")
        defer { try? test.close() }
        try Self.history(test)
        let maintenance = test.store.maintenance
        let live = try maintenance.digest()
        let applied = try maintenance.rebuild()
        #expect(applied == (try test.store.ledgerHead().sequence))
        #expect(try maintenance.digest() == live)
    }

    /// Any chunking reaches the same bytes: chunks decoded ahead by two threads, folded while
    /// the writer still stores the ones before (whose accounts the fold then reads from memory),
    /// accounts split across chunks at every point.
    @Test(arguments: [1, 2, 3, 7, 10_000])
    func rebuildingInChunksGivesTheSameDigest(chunkSize: Int) throws {
        let test = try TestStore(label: "rebuild-chunks")
        defer { try? test.close() }
        try Self.history(test)
        let store = test.store
        var maintenance = ProjectionMaintenance(environment: store.environment, ledger: store.ledger, projections: store.projections)
        maintenance.chunkSize = chunkSize
        let live = try maintenance.digest()
        var reports: [UInt64] = []
        let applied = try maintenance.rebuild { applied, _ in reports.append(applied) }
        let head = try test.store.ledgerHead().sequence
        #expect(applied == head)
        #expect(reports == Array(stride(from: UInt64(chunkSize), to: head, by: chunkSize)) + [head])
        #expect(try maintenance.digest() == live)
    }

    /// A catch-up asked to stop (the daemon's shutdown during start-up) stops between chunks,
    /// keeps the chunks it committed, and the next catch-up goes on from there to the same bytes.
    @Test func aStoppedCatchUpKeepsItsWorkAndResumes() throws {
        let test = try TestStore(label: "stop")
        defer { try? test.close() }
        try Self.history(test)
        let store = test.store
        let live = try store.maintenance.digest()
        var maintenance = ProjectionMaintenance(environment: store.environment, ledger: store.ledger, projections: store.projections)
        maintenance.chunkSize = 3
        try store.environment.writer.perform { txn in try store.projections.reset(in: txn) }
        let head = try store.ledgerHead().sequence
        var asked = 0
        #expect(throws: ProjectionError.interrupted) {
            try maintenance.catchUp(shouldStop: {
                asked += 1
                return asked > 2
            })
        }
        #expect(try store.maintenance.eventsBehind() == head - 6)
        #expect(try store.maintenance.catchUp() == head - 6)
        #expect(try store.maintenance.eventsBehind() == 0)
        #expect(try store.maintenance.digest() == live)
    }

    @Test func projectionsEqualAnIndependentFoldOfTheLedger() throws {
        let test = try TestStore(label: "fold")
        defer { try? test.close() }
        try Self.history(test)
        var model = InMemoryState()
        try test.store.environment.read { txn throws in
            try test.store.ledger.forEachEvent(in: txn) { envelope in
                model.apply(envelope.stream, envelope.payload, at: envelope.recordedAt)
                return .continue
            }
        }
        try test.store.read { reader throws in
            #expect(try reader.accountCount() == model.accounts.values.count)
            for (key, account) in model.accounts {
                #expect(try reader.account(key.uid, in: key.project) == account)
                #expect(try reader.cleanupSchedule(key.uid, in: key.project) == model.cleanupDue[key])
                if let email = account.email { #expect(try reader.owner(ofEmail: email, in: key.project) == key.uid) }
                // Only v1 tokens are indexed by hash; the others name their account.
                for token in account.refreshTokens {
                    let indexed = try reader.account(issuedRefreshToken: token, in: key.project)?.uid
                    #expect(indexed == (token.hasPrefix("r-v1-") ? key.uid : nil), "\(token)")
                }
            }
        }
        let project = TestStore.project
        #expect(try test.store.read { try $0.account(issuedRefreshToken: "r-v1-anon11", in: project) }?.uid == UserID("anon11"))
        #expect(try test.store.read { try $0.account(issuedRefreshToken: "r-v1-anon11-b", in: project) } == nil)
        #expect(try test.store.read { try $0.account(issuedRefreshToken: "r-anon-11", in: project) } == nil)
        // A token is found only within its account's project.
        #expect(try test.store.read { try $0.account(issuedRefreshToken: "r-v1-anon11", in: ProjectID("other")!) } == nil)
        #expect(
            try test.store.read { try $0.account(UserID("anon11")!, in: TestStore.project) }?.refreshTokens
                == ["r-anon-11", "r-v1-anon11"])
    }

    @Test func anOutdatedProjectionFormatIsRebuiltOnOpen() throws {
        let test = try TestStore(label: "format")
        try Self.history(test)
        let live = try test.store.maintenance.digest()
        try test.store.environment.writer.perform { txn in
            try txn.put(test.store.projections.state, "format", BigEndianUInt64(0))
            try txn.removeAll(test.store.projections.accounts)
        }
        let path = test.directory.path
        test.store.close()
        let reopened = try DataDirectory(path).open(as: "test")
        defer { reopened.close() }
        #expect(try reopened.maintenance.digest() == live)
        withExtendedLifetime(test) {}
    }
}

@Suite("projections: format stamped from the first event")
struct FormatStampTests {
    /// The daemon opens without a catch-up; a store it started empty must not be taken for
    /// another format's at the next open (which would rebuild every projection).
    @Test func aStoreStartedEmptyIsNotRebuiltWhenReopened() throws {
        let directory = TemporaryDirectory("stamp")
        let store = try DataDirectory(directory.path).open(as: "test", catchUp: false)
        try store.executeAndWait(
            .createAccount(TestStore.project, UserID("u1")!, AccountCreated(method: .anonymous, createdAt: 1)),
            metadata: TestStore.user)
        store.close()
        let reading = try DataDirectory(directory.path).openForReading()
        defer { reading.close() }
        #expect(try reading.maintenance.eventsBehind() == 0)
    }
}
