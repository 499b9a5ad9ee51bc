import HearthDomain

/// Tokens handed out by a sign-in, a link or a refresh.
public struct IssuedTokens: Sendable {
    public var idToken: String
    public var refreshToken: String
    /// Seconds, as the wire's `expiresIn`.
    public var expiresIn: Int64
}

public struct SignInResult: Sendable {
    public var account: Account
    public var tokens: IssuedTokens
    public var method: SignInMethod
    public var isNewUser: Bool
}

/// A sign-in that stopped at a second factor: its first factor passed (what it prepared, a
/// link or a proven email, is recorded), and the client completes it with
/// `mfaSignIn:finalize`. Thrown rather than returned, so that no flow can hand out tokens
/// for it by mistake; the HTTP adapter answers it with Firebase's `mfaPendingCredential`.
public struct SecondFactorRequired: Error, Sendable {
    public var account: Account
    public var method: SignInMethod
    public var isNewUser: Bool
    public var pendingCredential: String
}
