import HearthCrypto
import HearthDomain
import HearthStore
import HearthWire

/// TOTP second factors as Firebase's SDKs speak them (`/v2/accounts/mfaEnrollment:*` and
/// `mfaSignIn:finalize`): enrolling one, withdrawing it, and completing a sign-in that stopped
/// at it. The rules are the domain's (`SecondFactorRules`); codes are checked here, where the
/// secret can be opened, and their time step recorded by the write that accepts them.
public struct SecondFactorService: AuthFlow {
    public let context: AuthContext

    public init(context: AuthContext) {
        self.context = context
    }

    /// `totpSessionInfo`: what the user's authenticator app needs, and the sealed session.
    public struct TOTPEnrolment: Sendable {
        public var sharedSecretKey: String
        public var verificationCodeLength = TOTP.digits
        public var hashingAlgorithm = TOTP.algorithmName
        public var periodSec = TOTP.periodSeconds
        public var sessionInfo: String
        /// Unix milliseconds.
        public var finalizeEnrollmentTime: Int64
    }

    /// `mfaEnrollment:start` with `totpEnrollmentInfo`.
    public func startTOTPEnrolment(idToken: String?, _ caller: Caller) throws -> TOTPEnrolment {
        let (account, session) = try authenticate(idToken, caller)
        try checkFirstFactor(session.method)
        try domainRule { try SecondFactorRules.checkEnrolment(of: account, config: try projectConfig(caller)) }
        try requireRecentSignIn(account, session)
        let enrolment = EnrolmentSession(
            project: caller.project, uid: account.uid, enrollmentId: AuthContext.randomID(),
            secret: SecureRandom.bytes(TOTP.secretBytes), expiresAt: now + SecondFactorRules.enrolmentLifetime)
        return TOTPEnrolment(
            sharedSecretKey: Base32.encode(enrolment.secret), sessionInfo: try enrolment.sealed(by: secrets),
            finalizeEnrollmentTime: enrolment.expiresAt)
    }

    /// `mfaEnrollment:finalize` with `totpVerificationInfo`: the code proves the user's app holds
    /// the secret; the factor is recorded and the session goes on, now with the second factor.
    public func finalizeTOTPEnrolment(
        idToken: String?, sessionInfo: String?, code: String?, displayName: String?, _ caller: Caller
    ) async throws -> SignInResult {
        let (account, session) = try authenticate(idToken, caller)
        try checkFirstFactor(session.method)
        guard let sessionInfo, !sessionInfo.isEmpty else { throw FirebaseError.bad("MISSING_SESSION_INFO") }
        guard let code, !code.isEmpty else { throw FirebaseError.bad("MISSING_CODE") }
        if let displayName, displayName.utf8.count > SecondFactorRules.maxDisplayNameBytes {
            throw FirebaseError.bad("INVALID_DISPLAY_NAME : The display name is longer than 256 bytes.")
        }
        guard let enrolment = try EnrolmentSession.opened(sessionInfo, by: secrets), enrolment.project == caller.project,
            enrolment.uid == account.uid
        else { throw FirebaseError.bad("INVALID_SESSION_INFO") }
        guard enrolment.expiresAt > now else { throw FirebaseError.bad("SESSION_EXPIRED") }
        let config = try projectConfig(caller)
        let step = try checkCode(code, secret: enrolment.secret, uid: account.uid, config: config, caller)
        let sealedSecret = try secrets.seal(enrolment.secret, for: .totpSecret)
        let project = caller.project
        let uid = account.uid
        let recorded = try await write(caller, uid: uid) { tx in
            _ = try AuthContext.reverifiedAccount(uid, project, sessionIssuedAt: session.issuedAt, in: tx)
            let factor = SecondFactor(
                enrollmentId: enrolment.enrollmentId, displayName: displayName, enrolledAt: tx.now, sealedSecret: sealedSecret,
                lastUsedStep: step)
            try tx.execute(.enrollSecondFactor(project, uid, factor))
            // A session whose first factor may enrol carries no custom-token claims to keep.
            return try context.record(.continuedSession(project, uid, method: session.method), in: tx, secondFactor: factor)
        }
        return try await issueTokens(for: recorded, caller)
    }

    /// `mfaEnrollment:withdraw`: the factor goes and the account's sessions end with it; the
    /// caller's goes on in fresh tokens without a second factor.
    public func withdraw(idToken: String?, enrollmentId: String?, _ caller: Caller) async throws -> SignInResult {
        let (account, session) = try authenticate(idToken, caller)
        guard let enrollmentId, !enrollmentId.isEmpty else {
            throw FirebaseError.bad("MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
        }
        guard account.secondFactor(enrollmentId) != nil else { throw FirebaseError(AuthError.secondFactorNotFound) }
        try requireRecentSignIn(account, session)
        let project = caller.project
        let uid = account.uid
        let recorded = try await write(caller, uid: uid) { tx in
            _ = try AuthContext.reverifiedAccount(uid, project, sessionIssuedAt: session.issuedAt, in: tx)
            try tx.execute(.withdrawSecondFactor(project, uid, enrollmentId: enrollmentId, by: .user))
            return try context.record(.continuedSession(project, uid, method: session.method), in: tx)
        }
        return try await issueTokens(for: recorded, caller)
    }

    /// `mfaSignIn:finalize` with `totpVerificationInfo`: completes the sign-in its pending
    /// credential stopped, as the first factor's method, with the second factor's claims.
    public func finalizeTOTPSignIn(
        pendingCredential: String?, enrollmentId: String?, code: String?, _ caller: Caller
    ) async throws -> SignInResult {
        guard let pendingCredential, !pendingCredential.isEmpty else {
            throw FirebaseError.bad("MISSING_CREDENTIAL : Please set MFA Pending Credential.")
        }
        guard let pending = try PendingCredential.opened(pendingCredential, by: secrets) else {
            throw FirebaseError(AuthError.invalidPendingCredential)
        }
        guard pending.project == caller.project else {
            throw FirebaseError.bad("INVALID_PROJECT_ID : Project ID does not match MFA pending credential.")
        }
        guard let enrollmentId, !enrollmentId.isEmpty else {
            throw FirebaseError.bad("MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
        }
        guard let code, !code.isEmpty else { throw FirebaseError.bad("MISSING_CODE") }
        let project = caller.project
        let uid = pending.uid
        let (found, config) = try read { (try $0.account(uid, in: project), try $0.config(of: project)) }
        guard let account = found else { throw FirebaseError.userNotFound }
        // Checked before the code, so a spent or stale credential costs no guess.
        try domainRule { try SecondFactorRules.checkPending(since: pending.issuedAt, account: account, now: now) }
        guard !account.disabled else { throw FirebaseError.userDisabled }
        guard let factor = account.secondFactor(enrollmentId) else { throw FirebaseError(AuthError.secondFactorNotFound) }
        guard factor.isUsable else { throw FirebaseError(AuthError.secondFactorReenrolmentRequired) }
        guard let secret = try secrets.open(factor.sealedSecret, for: .totpSecret) else {
            throw FirebaseError.bad("INTERNAL_ERROR : the factor's secret can not be opened with this data directory's secrets key")
        }
        let step = try checkCode(code, secret: secret, uid: uid, config: config, caller)
        let recorded = try await write(caller, uid: uid) { tx in
            let use = Command.useSecondFactor(project, uid, enrollmentId: enrollmentId, step: step, pendingSince: pending.issuedAt)
            try tx.execute(use)
            guard let proven = try tx.account(uid, project).secondFactor(enrollmentId) else {
                throw FirebaseError(AuthError.secondFactorNotFound)
            }
            return try context.record(
                .existingAccount(project, uid, method: pending.method), in: tx, claims: pending.claims, secondFactor: proven)
        }
        return try await issueTokens(for: recorded, caller)
    }

    /// The time step `code` is for, under the abuse limits: a wrong code counts as a wrong
    /// password does, per account and per client address.
    private func checkCode(_ code: String, secret: [UInt8], uid: UserID, config: ProjectConfig, _ caller: Caller) throws -> Int64 {
        let attempt = try limits?.reserveSecondFactorAttempt(uid: uid, caller, now: now)
        guard
            let step = TOTP.matchingStep(
                code, secret: secret, at: now / 1000, adjacent: config.multiFactor.adjacentIntervals)
        else {
            limits?.passwordFailed(attempt, now: now)
            throw FirebaseError(AuthError.invalidSecondFactorCode)
        }
        limits?.passwordSucceeded(attempt, now: now)
        return step
    }

    private func checkFirstFactor(_ method: SignInMethod) throws {
        guard SecondFactorRules.supportsFirstFactor(method) else { throw FirebaseError(AuthError.unsupportedFirstFactor) }
    }

    private func domainRule(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as AuthError {
            throw FirebaseError(error)
        }
    }
}
