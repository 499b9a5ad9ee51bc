/// Emailed action codes: sending them, and using them (password reset, email verification and change, recovery, sign-in links).
public struct ActionCodeService: AuthFlow {
    public let context: AuthContext

    public init(context: AuthContext) {
        self.context = context
    }
}
