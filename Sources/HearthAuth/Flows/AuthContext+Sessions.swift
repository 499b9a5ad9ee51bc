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
    /// token, and the write's instant (ms), the one its events carry.
    struct RecordedSignIn: Sendable {
        var account: Account
        var method: SignInMethod
        var refresh: RefreshToken
        var isNewUser: Bool
        var at: Int64
    }

    /// Records a sign-in the domain planned: mints the session's refresh token for the planned
    /// account, then records the plan's commands.
    static func record(_ plan: SignInPlan, in tx: StoreTransaction, claims: [String: JSONValue] = [:]) throws -> RecordedSignIn {
        let refresh = TokenIssuer.newRefreshToken(for: plan.uid, method: plan.method, signedInAt: tx.now / 1000, claims: claims)
        for command in plan.commands(refreshTokenHash: refresh.hash) { try tx.execute(command) }
        return RecordedSignIn(
            account: try tx.account(plan.uid, plan.project), method: plan.method, refresh: refresh,
            isNewUser: plan.isNewUser, at: tx.now)
    }

    /// Mints the ID token for a session whose refresh token the transaction just recorded,
    /// issued at the transaction's instant.
    func issueTokens(for session: RecordedSignIn, _ caller: Caller, claims: [String: JSONValue] = [:]) async throws -> SignInResult {
        let idToken = try await tokens.idToken(
            for: session.account, in: caller.project, method: session.method, now: session.at, signedInAt: session.at / 1000,
            extraClaims: claims)
        return SignInResult(
            account: session.account,
            tokens: IssuedTokens(idToken: idToken, refreshToken: session.refresh.text, expiresIn: tokens.lifetime),
            method: session.method, isNewUser: session.isNewUser)
    }

    /// An opaque random id (createAuthUri's `sessionId`): 28 characters of [0-9A-Za-z].
    public static func randomID() -> String {
        SecureRandom.string(28, from: UserIDMinter.alphabet)
    }
}
