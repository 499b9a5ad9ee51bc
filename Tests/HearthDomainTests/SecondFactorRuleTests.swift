import HearthDomain
import HearthTesting
import Testing

/// Firebase's multi-factor rules, as `decide` applies them to TOTP factors.
@Suite("decide: second factors")
struct SecondFactorRuleTests: RuleFixture {
    var state = InMemoryState()

    func factor(_ id: String, step: Int64 = 100) -> SecondFactor {
        SecondFactor(enrollmentId: id, displayName: "app \(id)", enrolledAt: now, sealedSecret: [1, 2, 3], lastUsedStep: step)
    }

    /// An account with a verified email in a project that allows TOTP factors.
    mutating func verifiedAccount(_ raw: String = "u", multiFactor: MultiFactorConfig = .init(state: .enabled, totpEnabled: true))
        throws -> UserID
    {
        try given(
            .changeProjectConfig(project, ProjectConfigChange(multiFactor: multiFactor)),
            .createAccount(
                project, uid(raw),
                AccountCreated(method: .password, createdAt: now, email: "\(raw)@x.io", emailVerified: true, password: hash(1))))
        return uid(raw)
    }

    @Test mutating func enrolmentNeedsTheProjectsTOTPAndAVerifiedEmail() throws {
        let user = try verifiedAccount(multiFactor: MultiFactorConfig(state: .enabled, totpEnabled: false))
        #expect(throws: AuthError.secondFactorsNotEnabled) {
            try Decide.decide(.enrollSecondFactor(project, user, factor("a")), state: state, now: now)
        }
        try given(.changeProjectConfig(project, ProjectConfigChange(multiFactor: MultiFactorConfig(state: .disabled, totpEnabled: true))))
        #expect(throws: AuthError.secondFactorsNotEnabled) {
            try Decide.decide(.enrollSecondFactor(project, user, factor("a")), state: state, now: now)
        }
        try given(.changeProjectConfig(project, ProjectConfigChange(multiFactor: MultiFactorConfig(state: .enabled, totpEnabled: true))))
        try given(.update(project, user, AccountUpdate(emailVerified: false)))
        #expect(throws: AuthError.unverifiedEmail) {
            try Decide.decide(.enrollSecondFactor(project, user, factor("a")), state: state, now: now)
        }
        try given(.update(project, user, AccountUpdate(emailVerified: true)))
        #expect(
            try Decide.decide(.enrollSecondFactor(project, user, factor("a")), state: state, now: now) == [
                .secondFactorEnrolled(factor("a"))
            ])
    }

    @Test mutating func anAccountHoldsAtMostFiveFactorsEachOnce() throws {
        let user = try verifiedAccount()
        for index in 0..<SecondFactorRules.maxFactorsPerAccount { try given(.enrollSecondFactor(project, user, factor("f\(index)"))) }
        #expect(state.account(user, in: project)?.secondFactors.map(\.enrollmentId) == ["f0", "f1", "f2", "f3", "f4"])
        #expect(throws: AuthError.secondFactorLimitExceeded) {
            try Decide.decide(.enrollSecondFactor(project, user, factor("f5")), state: state, now: now)
        }
        try given(.withdrawSecondFactor(project, user, enrollmentId: "f4", by: .user))
        #expect(throws: AuthError.secondFactorExists) {
            try Decide.decide(.enrollSecondFactor(project, user, factor("f0")), state: state, now: now)
        }
    }

    @Test mutating func withdrawingEndsTheSessionsAndNeedsTheFactor() throws {
        let user = try verifiedAccount()
        try given(.enrollSecondFactor(project, user, factor("a")))
        #expect(throws: AuthError.secondFactorNotFound) {
            try Decide.decide(.withdrawSecondFactor(project, user, enrollmentId: "zz", by: .user), state: state, now: now)
        }
        #expect(
            try Decide.decide(.withdrawSecondFactor(project, user, enrollmentId: "a", by: .admin), state: state, now: now) == [
                .secondFactorWithdrawn(SecondFactorWithdrawn(enrollmentId: "a", by: .admin)),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .secondFactorWithdrawn)),
            ])
    }

    @Test mutating func mandatoryKeepsAUsersLastFactor() throws {
        let user = try verifiedAccount(multiFactor: MultiFactorConfig(state: .mandatory, totpEnabled: true))
        try given(.enrollSecondFactor(project, user, factor("a")), .enrollSecondFactor(project, user, factor("b")))
        try given(.withdrawSecondFactor(project, user, enrollmentId: "a", by: .user))
        #expect(throws: AuthError.lastSecondFactorRequired) {
            try Decide.decide(.withdrawSecondFactor(project, user, enrollmentId: "b", by: .user), state: state, now: now)
        }
        try given(.withdrawSecondFactor(project, user, enrollmentId: "b", by: .admin))
        #expect(state.account(user, in: project)?.secondFactors == [])
    }

    @Test mutating func aCodesStepIsUsedOnceAndNeverBeforeTheLastOne() throws {
        let user = try verifiedAccount()
        try given(.enrollSecondFactor(project, user, factor("a", step: 100)))
        let pending = now - 1000
        for step: Int64 in [99, 100] {
            #expect(throws: AuthError.invalidSecondFactorCode) {
                try Decide.decide(
                    .useSecondFactor(project, user, enrollmentId: "a", step: step, pendingSince: pending), state: state, now: now)
            }
        }
        try given(.useSecondFactor(project, user, enrollmentId: "a", step: 101, pendingSince: pending))
        #expect(state.account(user, in: project)?.secondFactor("a")?.lastUsedStep == 101)
        #expect(throws: AuthError.secondFactorNotFound) {
            try Decide.decide(.useSecondFactor(project, user, enrollmentId: "b", step: 102, pendingSince: pending), state: state, now: now)
        }
    }

    @Test mutating func aPendingCredentialServesOneSignInWithinItsLifetime() throws {
        let user = try verifiedAccount()
        try given(.enrollSecondFactor(project, user, factor("a")))
        let issued = now - 1000
        #expect(throws: AuthError.invalidPendingCredential) {
            try Decide.decide(
                .useSecondFactor(
                    project, user, enrollmentId: "a", step: 101, pendingSince: now - SecondFactorRules.pendingCredentialLifetime - 1),
                state: state, now: now)
        }
        // The sign-in it completes spends it: a second use finds a sign-in recorded after it.
        try given(
            .useSecondFactor(project, user, enrollmentId: "a", step: 101, pendingSince: issued),
            .signIn(project, user, method: .password, refreshTokenHash: nil))
        #expect(throws: AuthError.invalidPendingCredential) {
            try Decide.decide(.useSecondFactor(project, user, enrollmentId: "a", step: 102, pendingSince: issued), state: state, now: now)
        }
    }

    @Test func whichFirstFactorsMayHaveASecond() {
        #expect(SecondFactorRules.supportsFirstFactor(.password))
        #expect(SecondFactorRules.supportsFirstFactor(.emailLink))
        #expect(SecondFactorRules.supportsFirstFactor(.provider(.google)))
        #expect(!SecondFactorRules.supportsFirstFactor(.anonymous))
        #expect(!SecondFactorRules.supportsFirstFactor(.custom))
        #expect(!SecondFactorRules.supportsFirstFactor(.phone))
    }

    @Test mutating func erasingForgetsTheFactors() throws {
        let user = try verifiedAccount()
        try given(.enrollSecondFactor(project, user, factor("a")))
        let account = try #require(state.account(user, in: project))
        #expect(PersonalData.erasing(account).secondFactors.isEmpty)
    }

    @Test mutating func anImportKeepsItsFactorsWhateverTheProjectSays() throws {
        let sms = SecondFactor(
            enrollmentId: "s", kind: .phone, displayName: nil, enrolledAt: 1, sealedSecret: [], phoneNumber: "+15550100", lastUsedStep: 0)
        let created = AccountCreated(method: .import, createdAt: now, email: "i@x.io")
        #expect(throws: AuthError.duplicateEnrollmentId) {
            try Decide.decide(
                .importAccount(project, uid("i"), created, secondFactors: [sms, sms], overwrite: false), state: state, now: now)
        }
        let six = (0..<6).map { factor("f\($0)") }
        #expect(throws: AuthError.secondFactorLimitExceeded) {
            try Decide.decide(.importAccount(project, uid("i"), created, secondFactors: six, overwrite: false), state: state, now: now)
        }
        try given(.importAccount(project, uid("i"), created, secondFactors: [sms], overwrite: false))
        let account = try #require(state.account(uid("i"), in: project))
        #expect(account.secondFactors == [sms])
        // Only an SMS factor: a sign-in needs one, and has none it can use here.
        #expect(SecondFactorRules.requiresSecondFactor(account))
        #expect(throws: AuthError.secondFactorReenrolmentRequired) { try SecondFactorRules.checkUsable(account) }
        // Overwriting replaces the account whole, its factors too.
        try given(.importAccount(project, uid("i"), created, secondFactors: [factor("t")], overwrite: true))
        #expect(state.account(uid("i"), in: project)?.secondFactors.map(\.enrollmentId) == ["t"])
    }
}
