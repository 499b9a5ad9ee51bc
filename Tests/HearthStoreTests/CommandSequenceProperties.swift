import HearthDomain
import HearthLedger
import HearthProjections
import HearthStore
import HearthTesting
import LMDB
import PropertyBased
import Testing

/// Random command sequences against a real store; after each sequence the invariants hold.
@Suite("store: invariants under random command sequences")
struct CommandSequenceProperties {
    static let project = TestStore.project
    static let users = (0..<6).map { UserID("user\($0)")! }
    static let emails = ["a@x.io", "b@x.io", "c@x.io"]
    static let providers = ["google.com", "github.com"]

    /// Decodes one generated number into a command (and maybe a clock step).
    static func command(_ n: Int) -> Command {
        let uid = users[n % users.count]
        let email = emails[(n / 7) % emails.count]
        let provider = providers[(n / 11) % providers.count]
        let federatedId = "f\((n / 13) % 3)"
        let hash = PasswordHash(algorithm: "SCRYPT", hash: [UInt8(n % 256)], salt: [1])
        switch (n / 17) % 14 {
        case 0: return .createAccount(project, uid, AccountCreated(method: .anonymous, createdAt: 0))
        case 1: return .createAccount(project, uid, AccountCreated(method: .password, createdAt: 0, email: email, password: hash))
        case 2:
            return .createAccount(
                project, uid,
                AccountCreated(method: .federated, createdAt: 0, email: email, providers: [ProviderLink(providerId: provider, federatedId: federatedId, email: email)]))
        case 3: return .linkProvider(project, uid, ProviderLink(providerId: provider, federatedId: federatedId, email: email))
        case 4: return .unlinkProviders(project, uid, [provider, "password"])
        case 5: return .setPassword(project, uid, hash, email: n % 2 == 0 ? email : nil, reason: .changed)
        case 6: return .completeEmailLinkSignIn(project, uid, email: email, refreshTokenHash: "t\(n)")
        case 7: return .signIn(project, uid, method: "password", refreshTokenHash: "t\(n)")
        case 8: return .update(project, uid, AccountUpdate(email: n % 3 == 0 ? email : nil, disabled: n % 2 == 0, validSince: n % 5 == 0 ? Int64(n) : nil))
        case 9: return .deleteAccount(project, uid, by: .admin)
        case 10: return .changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: n % 2 == 0, oneAccountPerEmail: n % 3 != 0))
        case 11: return .purgeAnonymous(project, uid)
        case 12: return .update(project, uid, AccountUpdate(profile: ProfileUpdated(phoneNumber: "+1555000\(n % 3)")))
        default: return .revokeRefreshToken(project, uid, tokenHash: "t\(n - 17)")
        }
    }

    @Test func invariantsHoldForAnySequence() async throws {
        await propertyCheck(count: 60, input: Gen.int(in: 0...1_000_000).array(of: 1...50)) { numbers in
            do {
                try await Self.check(numbers)
            } catch {
                Issue.record("infrastructure error: \(error)")
            }
        }
    }

    /// The same, with runs of up to four commands in one write job (`executeAll`): each command
    /// must see the ones before it through the job's not-yet-flushed account cache.
    @Test func invariantsHoldWhenCommandsShareAWriteJob() async throws {
        await propertyCheck(count: 40, input: Gen.int(in: 0...1_000_000).array(of: 1...50)) { numbers in
            do {
                try await Self.check(numbers, sharingJobs: true)
            } catch {
                Issue.record("infrastructure error: \(error)")
            }
        }
    }

    static func check(_ numbers: [Int], sharingJobs: Bool = false) async throws {
        let test = try TestStore(label: "prop")
        defer { try? test.close() }
        var model = InMemoryState()
        var rest = numbers[...]
        while let first = rest.first {
            let job = rest.prefix(sharingJobs ? 1 + first % 4 : 1)
            rest = rest.dropFirst(job.count)
            test.clock.advance(days: Int64(first % 4) * 10)
            let now = test.clock.now()
            let commands = job.map(command)
            let results: [Result<[EventEnvelope], any Error>] =
                if sharingJobs {
                    try await test.store.executeAll(commands, metadata: TestStore.user)
                } else {
                    [Result { try test.run(commands[0]) }]
                }
            for (command, actual) in zip(commands, results) {
                var modelCopy = model
                let expected = Result { try modelCopy.execute(command, now: now) }
                // The store decides exactly as the pure model does.
                switch (expected, actual) {
                case (.success(let events), .success(let envelopes)):
                    #expect(envelopes.map(\.payload) == events)
                    model = modelCopy
                case (.failure(let modelError as AuthError), .failure(let storeError as AuthError)):
                    #expect(modelError == storeError)
                default:
                    Issue.record("model \(expected) vs store \(actual) for \(command)")
                }
            }
        }
        try verify(test, model)
    }

    /// The invariants, the model's accounts and a rebuild, checked on the store's final state.
    static func verify(_ test: TestStore, _ model: InMemoryState) throws {
        try test.store.read { reader throws in
            var emails = Set<String>()
            var federated = Set<String>()
            var accounts = 0
            try reader.txn.forEach(reader.projections.accounts) { _, value in
                let account = try Account(binary: value)
                accounts += 1
                if let email = account.email {
                    // One account per email.
                    #expect(emails.insert(email).inserted)
                    #expect(try reader.owner(ofEmail: email, in: project) == account.uid)
                }
                for link in account.providers {
                    // One account per federated id.
                    #expect(federated.insert(link.providerId + "|" + link.federatedId).inserted)
                    #expect(try reader.owner(ofProvider: link.providerId, federatedId: link.federatedId, in: project) == account.uid)
                }
                #expect(try reader.account(account.uid, in: project) == model.account(account.uid, in: project))
                return .continue
            }
            #expect(accounts == model.accounts.values.count)
            #expect(try reader.txn.count(reader.projections.emails) == emails.count)
            #expect(try reader.txn.count(reader.projections.federatedIds) == federated.count)
        }
        // Gapless global sequence and gapless stream versions from 1.
        try test.store.environment.read { txn throws in
            var expected: UInt64 = 1
            var versions: [StreamID: UInt64] = [:]
            try test.store.ledger.forEachEvent(in: txn) { envelope in
                #expect(envelope.sequence == expected)
                #expect(envelope.streamVersion == (versions[envelope.stream] ?? 0) + 1)
                versions[envelope.stream] = envelope.streamVersion
                expected += 1
                return .continue
            }
            for (stream, version) in versions { #expect(try test.store.ledger.version(of: stream, in: txn) == version) }
        }
        // fold(ledger) == live projections, byte for byte.
        let live = try test.store.maintenance.digest()
        try test.store.maintenance.rebuild()
        #expect(try test.store.maintenance.digest() == live)
    }
}
