/// Signing up and signing in: anonymously, with a password, a custom token, an email link or an identity provider (headless or through `/__/auth/handler`), linking a password, and which methods an email has (`createAuthUri`).
public struct SignInService: AuthFlow {
    public let context: AuthContext

    public init(context: AuthContext) {
        self.context = context
    }
}
