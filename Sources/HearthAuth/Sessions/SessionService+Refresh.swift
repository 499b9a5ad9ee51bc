import HearthDomain
import HearthStore

/// The Secure Token API's refresh, and session cookies.
extension SessionService {
    public struct Refreshed: Sendable {
        public var account: Account
        public var tokens: IssuedTokens
    }

    /// Exchanges a refresh token for a new ID token. Read-only: the session stays the one the
    /// ledger recorded, so the busiest request in production never waits for a commit.
    public func refresh(_ text: String?, _ caller: Caller) async throws -> Refreshed {
        guard let text, !text.isEmpty else { throw FirebaseError.bad("MISSING_REFRESH_TOKEN") }
        let token = RefreshToken(text: text)
        guard let session = token.session else { throw FirebaseError.invalidRefreshToken }
        let hash = token.hash
        let project = caller.project
        let found = try read { reader -> (account: Account?, holdsToken: Bool) in
            if let uid = session.uid {
                let account = try reader.account(uid, in: project)
                return (account, account?.refreshTokens.contains(hash) == true)
            }
            let account = try reader.account(issuedRefreshToken: hash, in: project)
            return (account, account != nil)
        }
        guard let account = found.account, found.holdsToken else {
            // As Firebase: a revoked session's token has expired, a deleted account's is not
            // found; but only for a token this daemon issued. Any other answers as unknown: a
            // guessed token must not tell which uids exist.
            guard session.uid != nil, token.isIssued(by: secrets) else { throw FirebaseError.invalidRefreshToken }
            throw found.account == nil ? FirebaseError.userNotFound : FirebaseError.tokenExpired
        }
        do {
            try account.admitsRefresh(tokenHash: hash)
        } catch {
            throw FirebaseError(error)
        }
        let idToken = try await tokens.idToken(
            for: account, in: project, method: session.method, now: now, signedInAt: session.signedInAt, extraClaims: session.claims)
        return Refreshed(
            account: account, tokens: IssuedTokens(idToken: idToken, refreshToken: text, expiresIn: tokens.lifetime))
    }

    /// Admin `create_session_cookie`: valid 5 minutes to 2 weeks (default 2 weeks).
    public func createSessionCookie(idToken: String?, validDuration: Int64?, _ caller: Caller) throws -> String {
        let duration = validDuration ?? TokenIssuer.longestSessionCookie
        guard (300...TokenIssuer.longestSessionCookie).contains(duration) else { throw FirebaseError.bad("INVALID_DURATION") }
        let (_, verified) = try authenticate(idToken, caller)
        return try tokens.sessionCookie(from: verified, in: caller.project, duration: duration, now: now)
    }
}
