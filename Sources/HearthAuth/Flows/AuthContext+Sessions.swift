import HearthCrypto
import HearthDomain
import HearthStore
import HearthWire

/// Sessions inside a write, and the tokens after it.
extension AuthContext {
    /// The account an ID token spoke for, read again inside the write that acts on it: a
    /// revocation or a disabling that committed after the token was checked (hashing a new
    /// password takes a while) must stop the request, not be outlived by a fresh session.
    static func reverifiedAccount(_ uid: UserID, _ project: ProjectID, sessionIssuedAt issuedAt: Int64, in tx: StoreTransaction) throws
        -> Account
    {
        let account = try tx.account(uid, project)
        try checkSession(of: account, issuedAt: issuedAt)
        return account
    }

    /// A session a write recorded: the account as the write left it, the session's refresh
    /// token (`nil`: the sign-in stopped at a second factor), and the write's instant (ms), the
    /// one its events carry.
    struct RecordedSignIn: Sendable {
        var account: Account
        var method: SignInMethod
        var refresh: RefreshToken?
        var isNewUser: Bool
        var at: Int64
        /// What the session's tokens carry beyond the account's own claims (a custom token's,
        /// the second factor's).
        var claims: [String: JSONValue]
    }

    /// Records a sign-in the domain planned: mints the session's refresh token for the planned
    /// account, then records the plan's commands. An account with a second factor gets only
    /// the plan's preparation, and a pending credential after the commit, unless `secondFactor`
    /// says which factor's code this sign-in proved (its step was recorded before the plan).
    func record(
        _ plan: SignInPlan, in tx: StoreTransaction, claims: [String: JSONValue] = [:], secondFactor: SecondFactor? = nil
    ) throws -> RecordedSignIn {
        // A new account has no factor yet: only an existing one is read for it.
        if secondFactor == nil, !plan.isNewUser, let account = try tx.account(plan.uid, in: plan.project),
            plan.stopsAtSecondFactor(account)
        {
            // As the sign-in itself would answer: a disabled account gets no second step.
            guard !account.disabled else { throw FirebaseError.userDisabled }
            do {
                try SecondFactorRules.checkUsable(account)
            } catch {
                throw FirebaseError(error)
            }
            for command in plan.commandsBeforeSecondFactor { try tx.execute(command) }
            return RecordedSignIn(
                account: try tx.account(plan.uid, plan.project), method: plan.method, refresh: nil, isNewUser: plan.isNewUser,
                at: tx.now, claims: claims)
        }
        var claims = claims
        if let secondFactor { claims["firebase"] = SecondFactorClaims.claims(of: secondFactor) }
        let refresh = try TokenIssuer.newRefreshToken(
            for: plan.uid, method: plan.method, signedInAt: tx.now / 1000, claims: claims, secrets: secrets)
        for command in plan.commands(refreshTokenHash: refresh.hash) { try tx.execute(command) }
        return RecordedSignIn(
            account: try tx.account(plan.uid, plan.project), method: plan.method, refresh: refresh,
            isNewUser: plan.isNewUser, at: tx.now, claims: claims)
    }

    /// Mints the ID token for a session whose refresh token the transaction just recorded,
    /// issued at the transaction's instant; or, for a sign-in that stopped at a second factor,
    /// throws `SecondFactorRequired` with its pending credential.
    func issueTokens(for session: RecordedSignIn, _ caller: Caller) async throws -> SignInResult {
        guard let refresh = session.refresh else {
            let pending = PendingCredential(
                project: caller.project, uid: session.account.uid, method: session.method, issuedAt: session.at,
                claims: session.claims)
            throw SecondFactorRequired(
                account: session.account, method: session.method, isNewUser: session.isNewUser,
                pendingCredential: try pending.sealed(by: secrets))
        }
        let idToken = try await tokens.idToken(
            for: session.account, in: caller.project, method: session.method, now: session.at, signedInAt: session.at / 1000,
            extraClaims: session.claims)
        return SignInResult(
            account: session.account,
            tokens: IssuedTokens(idToken: idToken, refreshToken: refresh.text, expiresIn: tokens.lifetime),
            method: session.method, isNewUser: session.isNewUser)
    }

    /// An opaque random id (createAuthUri's `sessionId`): 28 characters of [0-9A-Za-z].
    public static func randomID() -> String {
        SecureRandom.string(28, from: UserIDMinter.alphabet)
    }
}
