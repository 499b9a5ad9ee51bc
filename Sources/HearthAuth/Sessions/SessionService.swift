/// Sessions after sign-in: refreshing ID tokens, session cookies, and checking an ID token.
public struct SessionService: AuthFlow {
    public let context: AuthContext

    public init(context: AuthContext) {
        self.context = context
    }
}
