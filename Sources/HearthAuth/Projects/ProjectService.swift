/// A project's settings, identity providers, app links and anonymous cleanup, as its administrator sees them.
public struct ProjectService: AuthFlow {
    public let context: AuthContext

    public init(context: AuthContext) {
        self.context = context
    }
}
