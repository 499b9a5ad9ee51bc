/// Firebase's recent-login rule: changing the email or the password, deleting the account and
/// linking a credential need a session that signed in within the last five minutes, so a token
/// left on a shared device, or stolen, can not take the account over.
public struct RecentSignIn: Equatable, Sendable {
    /// How long after signing in a session may make sensitive changes (seconds).
    public var window: Int64

    public static let firebase = RecentSignIn(window: 300)

    public init(window: Int64) { self.window = window }

    /// Refuses a change by a session that signed in (`authTime`, seconds) too long ago. An
    /// account with nothing to sign in again with (anonymous) is not held to it: it could never
    /// upgrade or delete itself.
    public func check(_ account: Account, authTime: Int64?, now: Int64) throws(AuthError) {
        guard account.hasSignInMethod else { return }
        guard let authTime, now / 1000 - authTime <= window else { throw .credentialTooOld }
    }
}
