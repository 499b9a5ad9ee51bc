import HearthDomain
import HearthTesting
import Testing

/// Given past events (through the in-memory model), when a command, then these events or that error.
@Suite("decide: the business rules")
struct DecideTests: RuleFixture {
    var state = InMemoryState()

    func created(_ method: CreationMethod, email: String? = nil, password: PasswordHash? = nil, providers: [ProviderLink] = [])
        -> AccountCreated
    {
        AccountCreated(method: method, createdAt: now, email: email, password: password, providers: providers)
    }

    @Test mutating func anonymousSignUpNeedsTheMethodEnabled() throws {
        try given(.changeProjectConfig(project, ProjectConfigChange(anonymousEnabled: false)))
        #expect(throws: AuthError.operationNotAllowed) {
            try Decide.decide(.createAccount(project, uid("a"), created(.anonymous)), state: state, now: now)
        }
    }

    @Test mutating func emailLinkNeedsEmailPasswordEnabledToo() throws {
        try given(.changeProjectConfig(project, ProjectConfigChange(emailPasswordEnabled: false)))
        #expect(throws: AuthError.operationNotAllowed) {
            try Decide.decide(.createAccount(project, uid("a"), created(.emailLink, email: "a@x.io")), state: state, now: now)
        }
    }

    @Test mutating func anEmailBelongsToOneAccount() throws {
        try given(.createAccount(project, uid("first"), created(.password, email: "Same@Example.com", password: hash(1))))
        #expect(throws: AuthError.emailExists) {
            try Decide.decide(
                .createAccount(project, uid("second"), created(.password, email: "same@example.com", password: hash(2))), state: state,
                now: now)
        }
        #expect(state.account(uid("first"), in: project)?.email == "same@example.com")
    }

    @Test mutating func aFederatedIdentityBelongsToOneAccount() throws {
        let github = ProviderLink(providerId: "github.com", federatedId: "42")
        try given(
            .createAccount(project, uid("owner"), created(.federated, providers: [github])),
            .createAccount(project, uid("other"), created(.anonymous)))
        #expect(throws: AuthError.federatedUserIdAlreadyLinked) {
            try Decide.decide(.linkProvider(project, uid("other"), github), state: state, now: now)
        }
        #expect(throws: AuthError.providerAlreadyLinked) {
            try Decide.decide(
                .linkProvider(project, uid("owner"), ProviderLink(providerId: "github.com", federatedId: "43")), state: state, now: now)
        }
    }

    @Test mutating func oneAccountPerEmailAsksForConfirmation() throws {
        try given(.createAccount(project, uid("pw"), created(.password, email: "bob@x.io", password: hash(1))))
        let yahoo = ProviderLink(providerId: "yahoo.com", federatedId: "y1", email: "bob@x.io")
        #expect(throws: AuthError.needConfirmation(email: "bob@x.io", existingUid: uid("pw"))) {
            try Decide.decide(
                .createAccount(project, uid("fed"), created(.federated, email: "bob@x.io", providers: [yahoo])), state: state, now: now)
        }
        // With several accounts per email allowed, the federated account keeps the email on its provider only.
        try given(.changeProjectConfig(project, ProjectConfigChange(oneAccountPerEmail: false)))
        let events = try Decide.decide(
            .createAccount(project, uid("fed"), created(.federated, email: "bob@x.io", providers: [yahoo])), state: state, now: now)
        guard case .accountCreated(let made) = events.first else {
            Issue.record("no account")
            return
        }
        #expect(made.email == nil)
        #expect(made.providers == [yahoo])
    }

    @Test mutating func emailLinkRemovesAnUnverifiedPasswordAndRevokesSessions() throws {
        try given(
            .createAccount(project, uid("alice"), created(.password, email: "alice@x.io", password: hash(9))),
            .signIn(project, uid("alice"), method: "password", refreshTokenHash: "impostor-session"))
        let events = try Decide.decide(
            .completeEmailLinkSignIn(project, uid("alice"), email: "ALICE@x.io", refreshTokenHash: "alice"), state: state, now: now)
        #expect(
            events == [
                .passwordRemoved(PasswordRemoved(reason: .emailLinkVerified)),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .emailLinkVerified)),
                .emailVerified(EmailVerified(email: "alice@x.io")),
                .signInRecorded(SignInRecorded(method: "emailLink")),
                .refreshTokenIssued(RefreshTokenIssued(tokenHash: "alice")),
            ])
        try given(.completeEmailLinkSignIn(project, uid("alice"), email: "alice@x.io", refreshTokenHash: "alice"))
        let alice = try #require(state.account(uid("alice"), in: project))
        #expect(alice.password == nil)
        #expect(alice.emailVerified)
        #expect(alice.refreshTokens == ["alice"])
        #expect(alice.signInMethods == ["emailLink"])
    }

    @Test mutating func emailLinkOnAVerifiedAccountRemovesNothing() throws {
        var verified = created(.password, email: "v@x.io", password: hash(3))
        verified.emailVerified = true
        try given(.createAccount(project, uid("v"), verified))
        let events = try Decide.decide(
            .completeEmailLinkSignIn(project, uid("v"), email: "v@x.io", refreshTokenHash: nil), state: state, now: now)
        #expect(events == [.signInRecorded(SignInRecorded(method: "emailLink"))])
    }

    @Test mutating func emailLinkForAnotherEmailIsRefused() throws {
        try given(.createAccount(project, uid("v"), created(.password, email: "v@x.io", password: hash(3))))
        #expect(throws: AuthError.invalidEmail) {
            try Decide.decide(.completeEmailLinkSignIn(project, uid("v"), email: "w@x.io", refreshTokenHash: nil), state: state, now: now)
        }
    }

    @Test mutating func anAnonymousAccountUpgradesKeepingItsUid() throws {
        try given(
            .createAccount(project, uid("anon"), created(.anonymous)),
            .setPassword(project, uid("anon"), hash(4), email: "carol@x.io", reason: .changed))
        let carol = try #require(state.account(uid("anon"), in: project))
        #expect(!carol.isAnonymous)
        #expect(carol.email == "carol@x.io")
        #expect(carol.signInMethods == ["password"])
    }

    @Test mutating func purgeTouchesOnlyDueAnonymousAccounts() throws {
        try given(
            .changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: true)),
            .createAccount(project, uid("anon"), created(.anonymous)),
            .createAccount(project, uid("upgraded"), created(.anonymous)),
            .linkProvider(project, uid("upgraded"), ProviderLink(providerId: "google.com", federatedId: "g")))
        #expect(throws: AuthError.notDue) {
            try Decide.decide(.purgeAnonymous(project, uid("anon")), state: state, now: now)
        }
        let later = now + ProjectConfig().anonymousCleanupDelay
        let purged = AnonymousPurged(dueAt: later, rule: .createdWhileCleanupOn, since: now)
        #expect(try Decide.decide(.purgeAnonymous(project, uid("anon")), state: state, now: later) == [.anonymousPurged(purged)])
        #expect(throws: AuthError.notAnonymous) {
            try Decide.decide(.purgeAnonymous(project, uid("upgraded")), state: state, now: later)
        }
    }

    @Test mutating func unlinkingRemovesOnlyWhatIsLinked() throws {
        try given(
            .createAccount(project, uid("u"), created(.federated, providers: [ProviderLink(providerId: "github.com", federatedId: "1")])))
        #expect(
            try Decide.decide(.unlinkProviders(project, uid("u"), ["github.com", "facebook.com"]), state: state, now: now) == [
                .providerUnlinked(ProviderUnlinked(providerId: "github.com"))
            ])
        try given(.unlinkProviders(project, uid("u"), ["github.com"]))
        #expect(state.account(uid("u"), in: project)?.providers == [])
        #expect(state.owner(ofProvider: "github.com", federatedId: "1", in: project) == nil)
    }

    @Test mutating func outOfBandCodesAreSingleUseAndExpire() throws {
        let issued = OOBCodeIssued(requestType: .emailSignIn, email: "e@x.io", expiresAt: now + 60_000)
        try given(.issueOOBCode(project, codeHash: "h1", issued), .issueOOBCode(project, codeHash: "h2", issued))
        try given(.consumeOOBCode(project, codeHash: "h1"))
        #expect(throws: AuthError.invalidOobCode) { try Decide.decide(.consumeOOBCode(project, codeHash: "h1"), state: state, now: now) }
        #expect(throws: AuthError.invalidOobCode) { try Decide.decide(.consumeOOBCode(project, codeHash: "nope"), state: state, now: now) }
        #expect(throws: AuthError.expiredOobCode) {
            try Decide.decide(.consumeOOBCode(project, codeHash: "h2"), state: state, now: now + 60_000)
        }
    }

    @Test mutating func disabledAccountsCannotSignIn() throws {
        try given(
            .createAccount(project, uid("d"), created(.anonymous)),
            .update(project, uid("d"), AccountUpdate(disabled: true)))
        #expect(throws: AuthError.userDisabled) {
            try Decide.decide(.signIn(project, uid("d"), method: "anonymous", refreshTokenHash: nil), state: state, now: now)
        }
    }

    @Test mutating func updatesRecordOnlyWhatChanges() throws {
        try given(.createAccount(project, uid("p"), created(.password, email: "p@x.io", password: hash(1))))
        let update = AccountUpdate(
            emailVerified: true, profile: ProfileUpdated(displayName: "P", deleted: [.photoUrl]),
            customClaims: .some(#"{"role":"admin"}"#), disabled: false, revokeSessions: .since(seconds: 1_800_000_100))
        #expect(
            try Decide.decide(.update(project, uid("p"), update), state: state, now: now) == [
                .emailVerified(EmailVerified(email: "p@x.io")),
                .profileUpdated(ProfileUpdated(displayName: "P")),
                .customClaimsSet(CustomClaimsSet(claims: #"{"role":"admin"}"#)),
                .sessionsRevoked(SessionsRevoked(validSince: 1_800_000_100, reason: .admin)),
            ])
    }

    @Test mutating func aNewPasswordOrEmailEndsEarlierSessionsAtTheWritesInstant() throws {
        try given(.createAccount(project, uid("s"), created(.password, email: "s@x.io", password: hash(1))))
        #expect(
            try Decide.decide(.update(project, uid("s"), AccountUpdate(password: hash(2))), state: state, now: now) == [
                .passwordSet(PasswordSet(password: hash(2), reason: .changed)),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .passwordChanged)),
            ])
        #expect(
            try Decide.decide(.update(project, uid("s"), AccountUpdate(email: "T@x.io")), state: state, now: now) == [
                .emailChanged(EmailChanged(email: "t@x.io", verified: false)),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .emailChanged)),
            ])
        // The same address in another case is no change, and ends nothing.
        #expect(try Decide.decide(.update(project, uid("s"), AccountUpdate(email: "S@x.io")), state: state, now: now) == [])
        // A user's revocation is now; an administrator's is the second it names.
        #expect(
            try Decide.decide(.update(project, uid("s"), AccountUpdate(revokeSessions: .now)), state: state, now: now) == [
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .admin))
            ])
        let chosen = AccountUpdate(password: hash(3), revokeSessions: .since(seconds: 1_700_000_000))
        #expect(
            try Decide.decide(.update(project, uid("s"), chosen), state: state, now: now).last
                == .sessionsRevoked(SessionsRevoked(validSince: 1_700_000_000, reason: .passwordChanged)))
    }

    @Test mutating func aFieldSetAndDeletedInOneUpdateStaysSet() throws {
        try given(.createAccount(project, uid("f"), created(.anonymous)))
        try given(.update(project, uid("f"), AccountUpdate(profile: ProfileUpdated(photoUrl: "https://x.io/p.png"))))
        let update = AccountUpdate(profile: ProfileUpdated(displayName: "F", deleted: [.displayName, .photoUrl]))
        #expect(
            try Decide.decide(.update(project, uid("f"), update), state: state, now: now) == [
                .profileUpdated(ProfileUpdated(displayName: "F", deleted: [.photoUrl]))
            ])
    }

    @Test mutating func missingAccountsAreReported() throws {
        #expect(throws: AuthError.userNotFound) {
            try Decide.decide(.deleteAccount(project, uid("ghost"), by: .admin), state: state, now: now)
        }
        try given(.createAccount(project, uid("x"), created(.anonymous)))
        #expect(throws: AuthError.uidExists) {
            try Decide.decide(.createAccount(project, uid("x"), created(.anonymous)), state: state, now: now)
        }
    }

    @Test mutating func aPasswordResetVerifiesTheEmailAndEndsEverySession() throws {
        try given(.createAccount(project, uid("r"), created(.password, email: "r@x.io", password: hash(1))))
        #expect(
            try Decide.decide(.resetPassword(project, uid("r"), hash(2), email: "r@x.io", codeIssuedAt: now), state: state, now: now) == [
                .passwordSet(PasswordSet(password: hash(2), reason: .reset)),
                .emailVerified(EmailVerified(email: "r@x.io")),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .passwordChanged)),
            ])
        // A password set after the code was sent (here: the reset just applied) supersedes it.
        try given(.resetPassword(project, uid("r"), hash(2), email: "r@x.io", codeIssuedAt: now))
        #expect(throws: AuthError.invalidOobCode) {
            try Decide.decide(.resetPassword(project, uid("r"), hash(3), email: "r@x.io", codeIssuedAt: now - 1), state: state, now: now)
        }
        // A code sent to an address the account no longer has does nothing.
        try given(.update(project, uid("r"), AccountUpdate(email: "moved@x.io")))
        #expect(throws: AuthError.invalidOobCode) {
            try Decide.decide(.resetPassword(project, uid("r"), hash(3), email: "r@x.io", codeIssuedAt: now), state: state, now: now)
        }
    }

    @Test mutating func emailCodesVerifyOrMoveTheAccount() throws {
        try given(
            .createAccount(project, uid("v"), created(.password, email: "v@x.io", password: hash(1))),
            .createAccount(project, uid("taken"), created(.password, email: "taken@x.io", password: hash(2))))
        #expect(
            try Decide.decide(.applyEmailCode(project, uid("v"), email: "v@x.io", newEmail: nil), state: state, now: now) == [
                .emailVerified(EmailVerified(email: "v@x.io"))
            ])
        #expect(
            try Decide.decide(.applyEmailCode(project, uid("v"), email: "v@x.io", newEmail: "New@x.io"), state: state, now: now) == [
                .emailChanged(EmailChanged(email: "new@x.io", verified: true)),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .emailChanged)),
            ])
        #expect(throws: AuthError.emailExists) {
            try Decide.decide(.applyEmailCode(project, uid("v"), email: "v@x.io", newEmail: "taken@x.io"), state: state, now: now)
        }
        #expect(throws: AuthError.invalidOobCode) {
            try Decide.decide(.applyEmailCode(project, uid("ghost"), email: "v@x.io", newEmail: nil), state: state, now: now)
        }
    }

    @Test mutating func removingTheEmailEndsEmailLinkSignIn() throws {
        try given(
            .createAccount(project, uid("e"), created(.emailLink, email: "e@x.io")),
            .update(project, uid("e"), AccountUpdate(removeEmail: true)))
        let account = try #require(state.account(uid("e"), in: project))
        #expect(account.email == nil && !account.emailVerified && !account.emailLinkSignIn)
        #expect(try Decide.decide(.update(project, uid("e"), AccountUpdate(removeEmail: true)), state: state, now: now) == [])
    }

    @Test mutating func onlyTheAddresssOwnProviderJoinsItsAccountOtherwiseTheUserConfirms() throws {
        try given(
            .createAccount(project, uid("owner"), created(.password, email: "a@x.io", password: hash(1))),
            .createAccount(project, uid("gmail"), created(.password, email: "ann@gmail.com", password: hash(2))))
        let github = ProviderLink(providerId: .github, federatedId: "42", email: "A@x.io")
        func plan(_ link: ProviderLink, verified: Bool, trust: EmailTrust = .authoritativeProviders) throws -> FederatedSignInOutcome {
            try Decide.planFederatedSignIn(
                project, identity: link, emailVerified: verified, trust: trust, linkingTo: nil, newUid: uid("new"), now: now,
                state: state)
        }
        // GitHub's word, verified or not, does not prove an address it does not own (Firebase).
        let confirm = FederatedSignInOutcome.needConfirmation(email: "a@x.io", existingUid: uid("owner"), providers: [])
        #expect(try plan(github, verified: false) == confirm)
        #expect(try plan(github, verified: true) == confirm)
        // The emulator's rule (development) takes any verified email.
        guard case .signIn(let emulated) = try plan(github, verified: true, trust: .anyVerifiedEmail) else {
            Issue.record("the emulator's rule joins a verified email")
            return
        }
        #expect(emulated.uid == uid("owner"))
        // Google for a Gmail address: joins the account that has it.
        let google = ProviderLink(providerId: .google, federatedId: "g-7", email: "ann@gmail.com")
        #expect(try plan(google, verified: false) == .needConfirmation(email: "ann@gmail.com", existingUid: uid("gmail"), providers: []))
        guard case .signIn(let joined) = try plan(google, verified: true) else {
            Issue.record("Google's verified Gmail address joins its account")
            return
        }
        #expect(joined.uid == uid("gmail") && !joined.isNewUser && joined.method == .provider(.google))
        for command in joined.commands(refreshTokenHash: "t") { try state.execute(command, now: now) }
        // The provider proved the email: the password an impostor may have set goes, as after an
        // email link.
        let account = try #require(state.account(uid("gmail"), in: project))
        #expect(account.emailVerified && account.password == nil && account.refreshTokens == ["t"])
        #expect(account.provider(.google)?.federatedId == "g-7")
    }

    @Test mutating func anEmailLinkWhoseEmailBelongsToAnotherAccountCanNotBeLinked() throws {
        try given(
            .createAccount(project, uid("owner"), created(.password, email: "a@x.io", password: hash(1))),
            .createAccount(project, uid("anon"), created(.anonymous)))
        #expect(throws: AuthError.emailExists) {
            try Decide.planEmailLinkSignIn(project, email: "a@x.io", linkingTo: uid("anon"), newUid: uid("n"), now: now, state: state)
        }
        let plan = try Decide.planEmailLinkSignIn(
            project, email: "b@x.io", linkingTo: uid("anon"), newUid: uid("n"), now: now, state: state)
        #expect(plan.uid == uid("anon") && !plan.isNewUser && plan.preparation.isEmpty)
    }

    @Test mutating func anAdministratorsRevocationTimeLiesBetween1970AndAnHourAhead() throws {
        try given(.createAccount(project, uid("a"), created(.anonymous)))
        for seconds in [-1, now / 1000 + SessionRevocation.allowedSkewSeconds + 1] {
            #expect(throws: AuthError.revocationTimeOutOfRange) {
                try Decide.decide(
                    .update(project, uid("a"), AccountUpdate(revokeSessions: .since(seconds: seconds))), state: state, now: now)
            }
        }
        let ahead = now / 1000 + SessionRevocation.allowedSkewSeconds
        try given(.update(project, uid("a"), AccountUpdate(revokeSessions: .since(seconds: ahead))))
        #expect(state.account(uid("a"), in: project)?.validSince == ahead)
    }
}
