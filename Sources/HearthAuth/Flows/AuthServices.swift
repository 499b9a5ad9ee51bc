/// The flow services over one context, as the daemon wires them: each HTTP endpoint group takes
/// only the ones it calls.
public struct AuthServices: Sendable {
    public let context: AuthContext
    public let signIn: SignInService
    public let accounts: AccountService
    public let actionCodes: ActionCodeService
    public let projects: ProjectService
    public let sessions: SessionService
    public let keys: KeyService
    public let secondFactors: SecondFactorService

    public init(context: AuthContext) {
        self.context = context
        signIn = SignInService(context: context)
        accounts = AccountService(context: context)
        actionCodes = ActionCodeService(context: context)
        projects = ProjectService(context: context)
        sessions = SessionService(context: context)
        keys = KeyService(context: context)
        secondFactors = SecondFactorService(context: context)
    }
}
