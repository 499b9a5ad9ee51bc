import HearthDomain
import HearthTesting
import Testing

/// Rules that once lived in the flows or the HTTP adapter, each decided here over the
/// in-memory state: batch deletion, linking a password, a session's standing, email links
/// allowed, an import batch's duplicates.
@Suite("decide: batch deletion, linking a password, sessions, email links, import batches")
struct AccountRuleTests: RuleFixture {
    var state = InMemoryState()

    func decide(_ command: Command) throws -> [EventPayload] {
        try Decide.decide(command, state: state, now: now)
    }

    @Test("batch deletion: only a disabled account without force; a missing one counts as deleted")
    mutating func batchDeletion() throws {
        try given(
            .createAccount(project, uid("on"), AccountCreated(method: .anonymous, createdAt: now)),
            .createAccount(project, uid("off"), AccountCreated(method: .anonymous, createdAt: now)),
            .update(project, uid("off"), AccountUpdate(disabled: true)))
        #expect(throws: AuthError.notDisabled) { try decide(.batchDeleteAccount(project, uid("on"), force: false)) }
        #expect(try decide(.batchDeleteAccount(project, uid("on"), force: true)) == [.accountDeleted(AccountDeleted(by: .admin))])
        #expect(try decide(.batchDeleteAccount(project, uid("off"), force: false)) == [.accountDeleted(AccountDeleted(by: .admin))])
        #expect(try decide(.batchDeleteAccount(project, uid("ghost"), force: false)).isEmpty)
        // Disabled after the check would have run elsewhere: here the check is the write's own.
        try given(.update(project, uid("on"), AccountUpdate(disabled: true)))
        #expect(try decide(.batchDeleteAccount(project, uid("on"), force: false)) == [.accountDeleted(AccountDeleted(by: .admin))])
    }

    @Test("linking a password: the first one is set; replacing a password or an email is the holder's update, ending sessions")
    mutating func linkingAPassword() throws {
        try given(.createAccount(project, uid("anon"), AccountCreated(method: .anonymous, createdAt: now)))
        #expect(
            try decide(.linkPassword(project, uid("anon"), hash(1), email: "New@Example.com")) == [
                .emailChanged(EmailChanged(email: "new@example.com", verified: false)),
                .passwordSet(PasswordSet(password: hash(1), reason: .initial)),
            ])
        try given(.linkPassword(project, uid("anon"), hash(1), email: "new@example.com"))
        let replacing = try decide(.linkPassword(project, uid("anon"), hash(2), email: "new@example.com"))
        #expect(replacing.contains(.passwordSet(PasswordSet(password: hash(2), reason: .changed))))
        #expect(replacing.contains { if case .sessionsRevoked = $0 { true } else { false } })
        let moving = try decide(.linkPassword(project, uid("anon"), hash(3), email: "other@example.com"))
        #expect(moving.contains { if case .emailChanged(let changed) = $0 { changed.email == "other@example.com" } else { false } })
        // The holder's update: refused while Email/Password is off.
        try given(.changeProjectConfig(project, ProjectConfigChange(emailPasswordEnabled: false)))
        #expect(throws: AuthError.operationNotAllowed) {
            try decide(.linkPassword(project, uid("anon"), hash(4), email: "new@example.com"))
        }
    }

    @Test("a session stands from the last revocation on, while the account is enabled; a refresh token while held")
    mutating func sessions() throws {
        try given(.createAccount(project, uid("s"), AccountCreated(method: .anonymous, createdAt: now)))
        try given(.signIn(project, uid("s"), method: .anonymous, refreshTokenHash: "held"))
        try given(.update(project, uid("s"), AccountUpdate(revokeSessions: .now)))
        let account = try #require(state.account(uid("s"), in: project))
        #expect(throws: AuthError.tokenExpired) { try account.admitsSession(issuedAt: now / 1000 - 1) }
        #expect(throws: Never.self) { try account.admitsSession(issuedAt: now / 1000) }
        #expect(throws: AuthError.tokenExpired) { try account.admitsRefresh(tokenHash: "held") }
        try given(.signIn(project, uid("s"), method: .anonymous, refreshTokenHash: "new"))
        try given(.update(project, uid("s"), AccountUpdate(disabled: true)))
        let disabled = try #require(state.account(uid("s"), in: project))
        #expect(throws: AuthError.userDisabled) { try disabled.admitsSession(issuedAt: 1_800_000_000) }
        #expect(throws: AuthError.userDisabled) { try disabled.admitsRefresh(tokenHash: "new") }
    }

    @Test("email links need Email/Password and links with it")
    func emailLinks() {
        var config = ProjectConfig()
        #expect(config.allowsEmailLinkSignIn)
        config.emailLinkEnabled = false
        #expect(!config.allowsEmailLinkSignIn)
        config.emailLinkEnabled = true
        config.emailPasswordEnabled = false
        #expect(!config.allowsEmailLinkSignIn)
    }

    @Test("an import batch: duplicates refuse it whole, as Firebase's sanity check and uid check do")
    func importBatches() {
        func entry(_ id: String, _ email: String? = nil, _ identities: [(String, String)] = []) -> ImportBatch.Entry {
            ImportBatch.Entry(localId: id, email: email, identities: identities.map { (providerId: $0.0, rawId: $0.1) })
        }
        let twice = [entry("a", "x@y.io", [("github.com", "1")]), entry("a", "x@y.io", [("github.com", "1")])]
        #expect(throws: ImportBatch.Duplicate.email("x@y.io")) {
            try ImportBatch.check(twice, sanityCheck: true, overwrite: false, oneAccountPerEmail: true)
        }
        #expect(throws: ImportBatch.Duplicate.rawId(providerId: "github.com", rawId: "1")) {
            try ImportBatch.check(twice, sanityCheck: true, overwrite: false, oneAccountPerEmail: false)
        }
        #expect(throws: ImportBatch.Duplicate.localId("a")) {
            try ImportBatch.check(twice, sanityCheck: false, overwrite: false, oneAccountPerEmail: true)
        }
        #expect(throws: Never.self) { try ImportBatch.check(twice, sanityCheck: false, overwrite: true, oneAccountPerEmail: true) }
        #expect(throws: Never.self) {
            try ImportBatch.check(
                [entry("a", "x@y.io", [("github.com", "1")]), entry("b", "z@y.io", [("google.com", "1")])], sanityCheck: true,
                overwrite: false, oneAccountPerEmail: true)
        }
    }
}

@Suite("password hash algorithms: one table, the ledger's names and the import API's")
struct PasswordHashAlgorithmTests {
    @Test("every verifiable algorithm round-trips through its import name; Firebase's scrypt is SCRYPT there")
    func importNames() {
        #expect(PasswordHash.Algorithm(importName: "scrypt") == .firebaseScrypt)
        #expect(PasswordHash.Algorithm.firebaseScrypt.importName == "SCRYPT")
        #expect(PasswordHash.Algorithm.hearthScrypt.importName == "STANDARD_SCRYPT")
        for algorithm in PasswordHash.Algorithm.verifiable where algorithm != .hearthScrypt {
            #expect(algorithm.importName.flatMap(PasswordHash.Algorithm.init(importName:)) == algorithm, "\(algorithm)")
        }
        for name in ["MD5", "SHA256", "ARGON2", ""] { #expect(PasswordHash.Algorithm(importName: name) == nil, "\(name)") }
        #expect(PasswordHash.Algorithm.hmacSHA1.hmacDigestLength == 20 && PasswordHash.Algorithm.bcrypt.hmacDigestLength == nil)
        // A name a later version might record is kept as it is, not refused on read.
        #expect(PasswordHash.Algorithm(rawValue: "ARGON2ID").importName == nil)
    }
}
