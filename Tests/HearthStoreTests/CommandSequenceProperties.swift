import HearthDomain
import HearthLedger
import HearthProjections
@testable import HearthStore
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
        case 8:
            let revocation: SessionRevocation? = n % 5 == 0 ? .since(seconds: Int64(n)) : n % 5 == 1 ? .now : nil
            return .update(
                project, uid,
                AccountUpdate(
                    email: n % 3 == 0 ? email : nil, password: n % 4 == 0 ? hash : nil, disabled: n % 2 == 0,
                    revokeSessions: revocation))
        case 9: return .deleteAccount(project, uid, by: .admin)
        case 10: return .changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: n % 2 == 0, oneAccountPerEmail: n % 3 != 0))
        case 11: return .purgeAnonymous(project, uid)
        case 12:
            // Set some fields and delete some, overlapping: a field both set and deleted stays set.
            var profile = ProfileUpdated(
                displayName: n % 2 == 0 ? "N\(n % 3)" : nil, phoneNumber: n % 3 == 0 ? "+1555000\(n % 3)" : nil)
            profile.deleted = [ProfileUpdated.Field.displayName, .photoUrl, .phoneNumber].filter { _ in n % 5 < 3 }
            return .update(project, uid, AccountUpdate(profile: profile))
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
            let results: [Result<[StoredEvent], any Error>] =
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
                    checkRules(command, before: model, after: modelCopy, now: now)
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

    /// The rules `decide` owns, checked on each accepted command's before and after (both
    /// model and store run `decide`, so agreeing with each other can not catch a wrong rule).
    static func checkRules(_ command: Command, before: InMemoryState, after: InMemoryState, now: Int64) {
        guard case .update(let project, let uid, let update) = command,
            let old = before.account(uid, in: project), let new = after.account(uid, in: project)
        else { return }
        let emailMoved = update.email.map { normalizeEmail($0) != old.email } ?? false
        switch update.revokeSessions {
        case .since(let seconds)?:
            // An administrator's time wins; revocation never moves back.
            #expect(new.validSince == max(old.validSince, seconds))
            #expect(new.refreshTokens.isEmpty)
        case .now?:
            #expect(new.validSince == max(old.validSince, now / 1000))
            #expect(new.refreshTokens.isEmpty)
        case nil where update.password != nil || emailMoved:
            // A new password or email ends every earlier session.
            #expect(new.validSince == max(old.validSince, now / 1000), "\(command)")
            #expect(new.refreshTokens.isEmpty)
        case nil:
            // Nothing else ends sessions, except re-enabling a disabled account.
            if !(old.disabled && update.disabled == false) {
                #expect(new.validSince == old.validSince, "\(command)")
                #expect(new.refreshTokens == old.refreshTokens)
            }
        }
        // A field set in the update ends up set, even when also deleted.
        if let name = update.profile.displayName { #expect(new.displayName == name) }
        if let phone = update.profile.phoneNumber { #expect(new.phoneNumber == phone) }
        for field in update.profile.deleted {
            switch field {
            case .displayName where update.profile.displayName == nil: #expect(new.displayName == nil)
            case .photoUrl where update.profile.photoUrl == nil: #expect(new.photoUrl == nil)
            case .phoneNumber where update.profile.phoneNumber == nil: #expect(new.phoneNumber == nil)
            default: break
            }
        }
    }

    /// The invariants, the model's accounts and a rebuild, checked on the store's final state.
    static func verify(_ test: TestStore, _ model: InMemoryState) throws {
        try test.store.read { reader throws in
            var emails = Set<String>()
            var federated = Set<String>()
            var accounts = 0
            try reader.projectionReader.txn.forEach(reader.projectionReader.projections.accounts) { _, value in
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
            #expect(try reader.projectionReader.txn.count(reader.projectionReader.projections.emails) == emails.count)
            #expect(try reader.projectionReader.txn.count(reader.projectionReader.projections.federatedIds) == federated.count)
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
