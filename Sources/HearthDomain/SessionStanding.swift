/// Whether a session may still act for its account: one rule for ID tokens (checked on every
/// request that carries one, and again inside the write that acts on it) and for refresh tokens.
extension Account {
    /// A session that began at `issuedAt` (an ID token's `iat`, seconds): not before the
    /// account's sessions were revoked (whole seconds, as Firebase), and not on a disabled account.
    public func admitsSession(issuedAt: Int64) throws(AuthError) {
        guard issuedAt >= validSince else { throw .tokenExpired }
        guard !disabled else { throw .userDisabled }
    }

    /// A refresh token, by its hash: not on a disabled account, and only one the account still
    /// holds (revocation, a password or email change and an email-link takeover drop them).
    public func admitsRefresh(tokenHash: String) throws(AuthError) {
        guard !disabled else { throw .userDisabled }
        guard refreshTokens.contains(tokenHash) else { throw .tokenExpired }
    }
}
