import HearthDomain
import HearthStore

/// The Secure Token API's refresh, and `createAuthUri` (which sign-in methods an email has).
extension AuthService {
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
        let found = try read { reader -> Account? in
            if let uid = session.uid {
                // A token the account does not hold (revoked, or never issued) answers as an
                // unknown one: a guessed token must not tell which uids exist or are disabled.
                guard let account = try reader.account(uid, in: project), account.refreshTokens.contains(hash) else {
                    return nil
                }
                return account
            }
            return try reader.account(issuedRefreshToken: hash, in: project)
        }
        guard let account = found else { throw FirebaseError.invalidRefreshToken }
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
        let duration = validDuration ?? 1_209_600
        guard (300...1_209_600).contains(duration) else { throw FirebaseError.bad("INVALID_DURATION") }
        let (_, verified) = try authenticate(idToken, caller)
        return try tokens.sessionCookie(from: verified, in: caller.project, duration: duration, now: now)
    }

    public struct SignInMethods: Sendable, Equatable {
        public var registered: Bool
        /// Provider ids (`password` covers both password and email link).
        public var allProviders: [ProviderID]
        /// `password`, `emailLink` and federated provider ids.
        public var signInMethods: [SignInMethod]
    }

    /// `nil` under email enumeration protection: then nobody learns whether an address is registered.
    public func signInMethods(for email: String, _ caller: Caller) throws -> SignInMethods? {
        let project = caller.project
        let (found, config) = try read { reader in
            (
                try reader.owner(ofEmail: normalizeEmail(email), in: project).flatMap { try reader.account($0, in: project) },
                try reader.config(of: project)
            )
        }
        if config.improvedEmailPrivacy { return nil }
        guard let account = found else { return SignInMethods(registered: false, allProviders: [], signInMethods: []) }
        let federated = account.providers.map(\.providerId)
        let usesPassword = account.password != nil || account.emailLinkSignIn
        return SignInMethods(
            registered: true, allProviders: (usesPassword ? [.password] : []) + federated,
            signInMethods: account.signInMethods)
    }
}
