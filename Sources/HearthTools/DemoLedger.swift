import HearthDomain
import HearthStore

/// Sample ledgers: the walkthrough story of docs/operations.md, and bulk data for benchmarks and tests.
public enum DemoLedger {
    static let metadata = Metadata(actor: .cli, actorId: "demo")

    /// Records the story unless this ledger already has it; returns whether it did.
    public static func recordStoryOnce(_ store: AccountStore, project: ProjectID) async throws -> Bool {
        guard try store.audit.events(of: .account(project, UserID("demo-anonymous")!)).isEmpty else { return false }
        try await story(store, project: project)
        return true
    }

    /// A short story that exercises the lifecycle, including an email link that proves an email
    /// and removes the unverified password an impostor set.
    public static func story(_ store: AccountStore, project: ProjectID) async throws {
        func run(_ command: Command, as actor: Metadata.Actor = .endUser, _ id: String? = nil) async throws {
            _ = try await store.execute(command, metadata: Metadata(actor: actor, actorId: id, requestId: "demo"))
        }
        let scrypt = { (seed: UInt8) in
            PasswordHash(
                algorithm: .hearthScrypt, hash: Array(repeating: seed, count: 32), salt: Array(repeating: seed &+ 1, count: 16),
                memoryCost: 14, blockSize: 8, parallelization: 1, keyLength: 32)
        }
        let anonymous = UserID("demo-anonymous")!
        let impostor = UserID("demo-alice")!
        let github = UserID("demo-bob")!
        try await run(.changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: true)), as: .admin, "owner")
        try await run(.createAccount(project, anonymous, AccountCreated(method: .anonymous, createdAt: store.clock.now())))
        try await run(.signIn(project, anonymous, method: .anonymous, refreshTokenHash: String(repeating: "a", count: 64)))
        // The anonymous user upgrades with email+password: same uid, never auto-deleted now.
        try await run(.setPassword(project, anonymous, scrypt(1), email: "carol@example.com", reason: .initial))
        // Someone creates an account with Alice's email and never verifies it…
        try await run(
            .createAccount(
                project, impostor,
                AccountCreated(method: .password, createdAt: store.clock.now(), email: "alice@example.com", password: scrypt(2))))
        try await run(.signIn(project, impostor, method: .password, refreshTokenHash: String(repeating: "b", count: 64)))
        // …then Alice signs in by email link: the unverified password goes, sessions end.
        try await run(
            .completeEmailLinkSignIn(project, impostor, email: "alice@example.com", refreshTokenHash: String(repeating: "c", count: 64)))
        try await run(
            .createAccount(
                project, github,
                AccountCreated(
                    method: .federated, createdAt: store.clock.now(), email: "bob@example.com",
                    providers: [ProviderLink(providerId: "github.com", federatedId: "1234", email: "bob@example.com", screenName: "bob")])))
        try await run(
            .linkProvider(project, github, ProviderLink(providerId: "google.com", federatedId: "g-987", email: "bob@example.com")))
        try await run(.unlinkProviders(project, github, ["github.com"]))
        try await run(.update(project, github, AccountUpdate(customClaims: #"{"admin":true}"#)), as: .admin, "owner")
        try await run(.update(project, github, AccountUpdate(disabled: true)), as: .admin, "owner")
        try await run(.deleteAccount(project, github, by: .admin), as: .admin, "owner")
    }

    /// Appends a realistic mix (~6 events per account: created, signed in with a session,
    /// profile, provider or password changes) until the ledger holds at least `events` and
    /// the data at least `accounts` accounts. `progress(done, total)` runs after each batch,
    /// counting accounts when an account target is set, else events.
    public static func populate(
        _ store: AccountStore, events target: Int = 0, accounts accountTarget: Int = 0,
        project: ProjectID = ProjectID("bench")!, progress: (_ done: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) async throws {
        var account = try store.read { try $0.accountCount() }
        var head = try store.ledgerHead().sequence
        func report() {
            if accountTarget > 0 {
                progress(UInt64(min(account, accountTarget)), UInt64(accountTarget))
            } else {
                progress(min(head, UInt64(target)), UInt64(target))
            }
        }
        let hash = PasswordHash(
            algorithm: .hearthScrypt, hash: Array(repeating: 7, count: 32), salt: Array(repeating: 9, count: 16), memoryCost: 14,
            blockSize: 8, parallelization: 1, keyLength: 32)
        while head < UInt64(target) || account < accountTarget {
            var commands: [Command] = []
            for _ in 0..<1000 {
                account += 1
                let uid = UserID("u\(account)")!
                let now = store.clock.now()
                if account % 3 == 0 {
                    commands.append(.createAccount(project, uid, AccountCreated(method: .anonymous, createdAt: now)))
                    commands.append(.signIn(project, uid, method: .anonymous, refreshTokenHash: tokenHash(account, 0)))
                } else {
                    commands.append(
                        .createAccount(
                            project, uid,
                            AccountCreated(method: .password, createdAt: now, email: "user\(account)@example.com", password: hash)))
                    commands.append(.signIn(project, uid, method: .password, refreshTokenHash: tokenHash(account, 0)))
                }
                commands.append(.update(project, uid, AccountUpdate(profile: ProfileUpdated(displayName: "User \(account)"))))
                if account % 4 == 0 {
                    commands.append(
                        .linkProvider(
                            project, uid, ProviderLink(providerId: "google.com", federatedId: "g\(account)", email: "g\(account)@gmail.com")
                        ))
                }
                commands.append(.signIn(project, uid, method: .password, refreshTokenHash: tokenHash(account, 1)))
            }
            let results = try await store.executeAll(commands, metadata: visitor)
            for result in results { _ = try result.get() }
            head = try store.ledgerHead().sequence
            report()
        }
    }

    /// Who `populate`'s events come from: an end user with an address, as in production, so
    /// each event seals one (a rebuild measured on them pays for the keys as a real one does).
    static let visitor = Metadata(actor: .endUser, actorId: "bench", requestId: "bench", clientIp: "203.0.113.7")

    static func tokenHash(_ account: Int, _ index: Int) -> String {
        let text = String(account, radix: 16) + "-" + String(index)
        return String(repeating: "0", count: max(0, 64 - text.count)) + text
    }
}
