import HearthDomain
import HearthTesting
import Testing

/// Email-link sign-in's revocation (proving an unverified email ends every earlier session), the
/// `password` provider's reach, and the Email/Password switch, as `decide` rules (the HTTP suites
/// drive the same rules through the API).
@Suite("decide: proving an email, unlinking password, Email/Password off")
struct SeedRuleTests: RuleFixture {
    var state = InMemoryState()

    @Test mutating func provingAnUnverifiedEmailRevokesEvenWithNothingToRemove() throws {
        try given(
            .createAccount(project, uid("anon"), AccountCreated(method: .anonymous, createdAt: now)),
            .signIn(project, uid("anon"), method: .anonymous, refreshTokenHash: "impostor"),
            .update(project, uid("anon"), AccountUpdate(email: "victim@x.io")))
        let events = try Decide.decide(
            .completeEmailLinkSignIn(project, uid("anon"), email: "victim@x.io", refreshTokenHash: "owner"), state: state, now: now)
        #expect(events.first == .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .emailLinkVerified)))
        let byProvider = try Decide.decide(.confirmEmailByProvider(project, uid("anon"), email: "victim@x.io"), state: state, now: now)
        #expect(byProvider.first == .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .providerVerified)))
    }

    @Test mutating func unlinkingPasswordEndsEmailLinkAndTheEmail() throws {
        try given(
            .createAccount(project, uid("link"), AccountCreated(method: .emailLink, createdAt: now, email: "l@x.io", emailVerified: true)))
        let events = try Decide.decide(.unlinkProviders(project, uid("link"), [.password]), state: state, now: now)
        #expect(
            events == [
                .providerUnlinked(ProviderUnlinked(providerId: .password)), .emailChanged(EmailChanged(email: nil, verified: false)),
            ])
        try given(.unlinkProviders(project, uid("link"), [.password]))
        let account = try #require(state.account(uid("link"), in: project))
        #expect(account.email == nil && !account.emailLinkSignIn && account.signInMethods.isEmpty)
        #expect(try Decide.decide(.unlinkProviders(project, uid("link"), [.password]), state: state, now: now) == [])
    }

    @Test mutating func unlinkingPasswordWhileRemovingTheEmailRemovesItOnce() throws {
        try given(
            .createAccount(project, uid("link"), AccountCreated(method: .emailLink, createdAt: now, email: "l@x.io", emailVerified: true)))
        let events = try Decide.decide(
            .update(project, uid("link"), AccountUpdate(removeEmail: true, unlinkProviders: [.password])), state: state, now: now)
        #expect(
            events == [
                .emailChanged(EmailChanged(email: nil, verified: false)), .providerUnlinked(ProviderUnlinked(providerId: .password)),
            ])
    }

    @Test mutating func emailPasswordOffStopsPasswordAndLinkSignIns() throws {
        let hash = PasswordHash(algorithm: "SCRYPT", hash: [1], salt: [1], memoryCost: 14, blockSize: 8, parallelization: 1)
        try given(
            .createAccount(project, uid("pw"), AccountCreated(method: .password, createdAt: now, email: "p@x.io", password: hash)),
            .changeProjectConfig(project, ProjectConfigChange(emailPasswordEnabled: false)))
        #expect(throws: AuthError.passwordLoginDisabled) {
            try Decide.decide(.signIn(project, uid("pw"), method: .password, refreshTokenHash: nil), state: state, now: now)
        }
        #expect(throws: AuthError.operationNotAllowed) {
            try Decide.decide(.completeEmailLinkSignIn(project, uid("pw"), email: "p@x.io", refreshTokenHash: nil), state: state, now: now)
        }
        var byUser = AccountUpdate(password: hash)
        byUser.byAccountHolder = true
        #expect(throws: AuthError.operationNotAllowed) { try Decide.decide(.update(project, uid("pw"), byUser), state: state, now: now) }
        #expect(try Decide.decide(.update(project, uid("pw"), AccountUpdate(password: hash)), state: state, now: now).isEmpty == false)
    }
}
