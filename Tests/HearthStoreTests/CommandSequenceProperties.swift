import HearthDomain
import HearthLedger
import HearthProjections
import HearthTesting
import LMDB
import PropertyBased
import Testing

@testable import HearthStore

/// Random command sequences against a real store; after each sequence the invariants hold.
@Suite("store: invariants under random command sequences")
struct CommandSequenceProperties {
    static let project = TestStore.project
    static let users = (0..<6).map { UserID("user\($0)")! }
    static let emails = ["a@x.io", "b@x.io", "c@gmail.com"]
    static let providers: [ProviderID] = [.google, .github]

    /// What one generated number stands for: a command, or a sign-in the domain plans (which
    /// account signs in) and that then runs as several commands in one transaction.
    enum Operation: CustomStringConvertible {
        case command(Command)
        case federatedSignIn(
            ProviderLink, emailVerified: Bool, trust: EmailTrust, linking: UserID?, newUid: UserID, tokenHash: String)
        case emailLinkSignIn(email: String, linking: UserID?, newUid: UserID, tokenHash: String)

        var command: Command? {
            if case .command(let command) = self { command } else { nil }
        }

        var description: String {
            switch self {
            case .command(let command): "\(command)"
            case .federatedSignIn(let link, let verified, _, let linking, _, _):
                "federated \(link.providerId)/\(link.federatedId) \(link.email ?? "-") verified=\(verified) linking=\(linking?.rawValue ?? "-")"
            case .emailLinkSignIn(let email, let linking, _, _): "email link \(email) linking=\(linking?.rawValue ?? "-")"
            }
        }
    }

    /// What an operation came to: the plan (for sign-ins) and the events recorded.
    struct Outcome: Equatable {
        var plan: FederatedSignInOutcome?
        var events: [EventPayload]
    }

    static func operation(_ n: Int) -> Operation {
        let uid = users[n % users.count]
        let email = emails[(n / 7) % emails.count]
        let linking = n % 3 == 0 ? uid : nil
        switch (n / 17) % 16 {
        case 14:
            let link = ProviderLink(
                providerId: providers[(n / 11) % providers.count], federatedId: "f\((n / 13) % 3)",
                email: n % 4 == 0 ? nil : email)
            return .federatedSignIn(
                link, emailVerified: n % 5 < 3, trust: n % 2 == 0 ? .authoritativeProviders : .anyVerifiedEmail, linking: linking,
                newUid: UserID("n\(n)")!, tokenHash: "s\(n)")
        case 15:
            return .emailLinkSignIn(email: email, linking: linking, newUid: UserID("n\(n)")!, tokenHash: "s\(n)")
        default:
            return .command(command(n))
        }
    }

    /// Decodes one generated number into a command (and maybe a clock step).
    static func command(_ n: Int) -> Command {
        let uid = users[n % users.count]
        let email = emails[(n / 7) % emails.count]
        let provider = providers[(n / 11) % providers.count]
        let federatedId = "f\((n / 13) % 3)"
        let hash = PasswordHash(algorithm: "SCRYPT", hash: [UInt8(n % 256)], salt: [1])
        switch (n / 17) % 16 {
        case 0: return .createAccount(project, uid, AccountCreated(method: .anonymous, createdAt: 0))
        case 1: return .createAccount(project, uid, AccountCreated(method: .password, createdAt: 0, email: email, password: hash))
        case 2:
            return .createAccount(
                project, uid,
                AccountCreated(
                    method: .federated, createdAt: 0, email: email,
                    providers: [ProviderLink(providerId: provider, federatedId: federatedId, email: email)]))
        case 3: return .linkProvider(project, uid, ProviderLink(providerId: provider, federatedId: federatedId, email: email))
        case 4: return .unlinkProviders(project, uid, [provider, .password])
        case 5: return .setPassword(project, uid, hash, email: n % 2 == 0 ? email : nil, reason: .changed)
        case 6: return .completeEmailLinkSignIn(project, uid, email: email, refreshTokenHash: "t\(n)")
        case 7: return .signIn(project, uid, method: .password, refreshTokenHash: "t\(n)")
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
        case 13: return .batchDeleteAccount(project, uid, force: n % 2 == 0)
        case 14: return .linkPassword(project, uid, hash, email: email)
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
            let job = rest.prefix(sharingJobs ? 1 + first % 4 : 1).map(operation)
            rest = rest.dropFirst(job.count)
            test.clock.advance(days: Int64(first % 4) * 10)
            let now = test.clock.now()
            let commands = job.compactMap(\.command)
            var results: [Result<Outcome, any Error>] = []
            if sharingJobs && commands.count == job.count {
                results = try await test.store.executeAll(commands, metadata: TestStore.user).map { result in
                    result.map { Outcome(plan: nil, events: $0.map(\.payload)) }
                }
            } else {
                for operation in job {
                    do {
                        results.append(.success(try await run(operation, on: test.store)))
                    } catch {
                        results.append(.failure(error))
                    }
                }
            }
            for (operation, actual) in zip(job, results) {
                var modelCopy = model
                let expected = Result { try run(operation, on: &modelCopy, now: now) }
                // The store decides exactly as the pure model does.
                switch (expected, actual) {
                case (.success(let modelOutcome), .success(let storeOutcome)):
                    #expect(storeOutcome == modelOutcome)
                    checkRules(operation, modelOutcome, before: model, after: modelCopy, now: now)
                    model = modelCopy
                case (.failure(let modelError as AuthError), .failure(let storeError as AuthError)):
                    #expect(modelError == storeError)
                default:
                    Issue.record("model \(expected) vs store \(actual) for \(operation)")
                }
            }
        }
        try verify(test, model)
    }

    /// The sign-in the domain plans for `operation` against `state`.
    static func plan(_ operation: Operation, state: some DecisionState, now: Int64) throws -> FederatedSignInOutcome? {
        switch operation {
        case .command:
            return nil
        case .federatedSignIn(let link, let verified, let trust, let linking, let newUid, _):
            return try Decide.planFederatedSignIn(
                project, identity: link, emailVerified: verified, trust: trust, linkingTo: linking, newUid: newUid, now: now,
                state: state)
        case .emailLinkSignIn(let email, let linking, let newUid, _):
            return .signIn(
                try Decide.planEmailLinkSignIn(project, email: email, linkingTo: linking, newUid: newUid, now: now, state: state))
        }
    }

    static func tokenHash(_ operation: Operation) -> String? {
        switch operation {
        case .command: nil
        case .federatedSignIn(_, _, _, _, _, let hash), .emailLinkSignIn(_, _, _, let hash): hash
        }
    }

    /// The operation on the model: the plan, then its commands (the caller drops the model
    /// when one throws, as the store rolls the transaction back).
    static func run(_ operation: Operation, on model: inout InMemoryState, now: Int64) throws -> Outcome {
        if let command = operation.command { return Outcome(plan: nil, events: try model.execute(command, now: now)) }
        let planned = try plan(operation, state: model, now: now)
        var events: [EventPayload] = []
        if case .signIn(let signIn)? = planned {
            for command in signIn.commands(refreshTokenHash: tokenHash(operation)) { events += try model.execute(command, now: now) }
        }
        return Outcome(plan: planned, events: events)
    }

    /// The operation in one store transaction, as the auth flows run it.
    static func run(_ operation: Operation, on store: AccountStore) async throws -> Outcome {
        try await store.transaction(metadata: TestStore.user) { tx in
            if let command = operation.command { return Outcome(plan: nil, events: try tx.execute(command).map(\.payload)) }
            let planned = try plan(operation, state: tx, now: tx.now)
            var events: [EventPayload] = []
            if case .signIn(let signIn)? = planned {
                for command in signIn.commands(refreshTokenHash: tokenHash(operation)) {
                    events += try tx.execute(command).map(\.payload)
                }
            }
            return Outcome(plan: planned, events: events)
        }
    }

    static func checkRules(_ operation: Operation, _ outcome: Outcome, before: InMemoryState, after: InMemoryState, now: Int64) {
        switch (operation, outcome.plan) {
        case (.command(let command), _):
            checkRules(command, before: before, after: after, now: now)
        case (.federatedSignIn(let link, let verified, let trust, let linking, _, let token), let planned?):
            // Only the address's own provider's word counts, unless the emulator's rule is asked for.
            let trusted =
                verified && (trust == .anyVerifiedEmail || link.email.map { link.providerId.isAuthority(forEmail: $0) } == true)
            checkFederatedRules(link, trusted: trusted, linking: linking, token: token, planned, before: before, after: after, now: now)
        case (.emailLinkSignIn(let email, let linking, _, let token), .signIn(let plan)?):
            checkEmailLinkRules(email, linking: linking, token: token, plan, before: before, after: after, now: now)
        default:
            Issue.record("no plan for \(operation)")
        }
    }

    /// Which account a federated identity signs in to: the one it is linked to, else
    /// (one account per email) the one with its email, joined only if the provider's word on the
    /// address is trusted; else a new one. Linking adds it to the signed-in account.
    static func checkFederatedRules(
        _ link: ProviderLink, trusted: Bool, linking: UserID?, token: String, _ outcome: FederatedSignInOutcome,
        before: InMemoryState, after: InMemoryState, now: Int64
    ) {
        let linkedOwner = before.owner(ofProvider: link.providerId, federatedId: link.federatedId, in: project)
        let emailOwner = link.email.flatMap { before.owner(ofEmail: $0, in: project) }
        let oneAccountPerEmail = before.config(of: project).oneAccountPerEmail
        switch outcome {
        case .needConfirmation(let email, let uid, _):
            #expect(linking == nil && linkedOwner == nil && !trusted && oneAccountPerEmail)
            #expect(uid == emailOwner && email == link.email)
            #expect(after.accounts == before.accounts, "nothing is written")
        case .signIn(let plan):
            #expect(after.owner(ofProvider: link.providerId, federatedId: link.federatedId, in: project) == plan.uid)
            #expect(after.account(plan.uid, in: project)?.refreshTokens.contains(token) == true)
            if let linking {
                #expect(plan.uid == linking && !plan.isNewUser)
                if oneAccountPerEmail, let emailOwner { #expect(emailOwner == linking) }
            } else if let linkedOwner {
                #expect(plan.uid == linkedOwner && !plan.isNewUser && plan.preparation.isEmpty)
            } else if oneAccountPerEmail, let emailOwner, let old = before.account(emailOwner, in: project) {
                #expect(trusted && plan.uid == emailOwner && !plan.isNewUser)
                if let new = after.account(emailOwner, in: project) {
                    #expect(new.emailVerified)
                    checkTakeover(old, new, token: token, now: now)
                }
            } else {
                #expect(plan.isNewUser && before.account(plan.uid, in: project) == nil)
            }
        }
    }

    /// Email-link sign-in: the link's account (the signed-in one, else the email's owner, else a
    /// new one) ends up with the email verified, and a password set while it was unverified is
    /// gone.
    static func checkEmailLinkRules(
        _ email: String, linking: UserID?, token: String, _ plan: SignInPlan, before: InMemoryState, after: InMemoryState,
        now: Int64
    ) {
        let owner = before.owner(ofEmail: email, in: project)
        if let linking {
            #expect(plan.uid == linking && (owner == nil || owner == linking))
        } else if let owner {
            #expect(plan.uid == owner && !plan.isNewUser)
        } else {
            #expect(plan.isNewUser && before.account(plan.uid, in: project) == nil)
        }
        guard let new = after.account(plan.uid, in: project) else {
            Issue.record("no account after \(plan)")
            return
        }
        #expect(new.email == normalizeEmail(email) && new.emailVerified && new.emailLinkSignIn)
        #expect(new.refreshTokens.contains(token))
        if let old = before.account(plan.uid, in: project) { checkTakeover(old, new, token: token, now: now) }
    }

    /// Proving an unverified email removes the password someone may have set with it, and ends
    /// every session opened before (only the new one is left).
    static func checkTakeover(_ old: Account, _ new: Account, token: String, now: Int64) {
        guard old.email != nil, !old.emailVerified, old.password != nil else { return }
        #expect(new.password == nil)
        #expect(new.validSince >= now / 1000)
        #expect(new.refreshTokens == [token])
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
                    #expect(federated.insert(link.providerId.rawValue + "|" + link.federatedId).inserted)
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
