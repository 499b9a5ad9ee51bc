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
