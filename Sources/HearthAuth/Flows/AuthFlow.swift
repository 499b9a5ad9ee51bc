import HearthDomain
import HearthStore
import HearthWire

/// A flow service: one group of Firebase Auth operations over the shared `AuthContext`. The
/// extension hands each flow the context's parts and helpers by their short names, so a flow
/// reads as the operation it performs.
public protocol AuthFlow: Sendable {
    var context: AuthContext { get }
}

extension AuthFlow {
    public var now: Int64 { context.now }
    var store: AccountStore { context.store }
    var tokens: TokenIssuer { context.tokens }
    public var settings: AuthSettings { context.settings }
    var limits: AbuseGuard? { context.limits }
    var outbox: Outbox? { context.outbox }
    var mailer: (any ActionLinkMailer)? { context.mailer }
    var passwords: PasswordHasher { context.passwords }
    public var secrets: SecretSealer { context.secrets }
    var identityProviders: (any IdentityProviderGateway)? { context.identityProviders }
    public var pendingSignIns: PendingAuthorizations { context.pendingSignIns }

    @discardableResult
    func write<R: Sendable>(
        _ caller: Caller, uid: UserID? = nil, _ body: @escaping @Sendable (StoreTransaction) throws -> R
    ) async throws -> R {
        try await context.write(caller, uid: uid, body)
    }

    func inFirebaseTerms<R>(_ body: () async throws -> R) async throws -> R { try await context.inFirebaseTerms(body) }
    func read<R>(_ body: (StoreReader) throws -> R) throws -> R { try context.read(body) }

    /// The caller's project's settings.
    func projectConfig(_ caller: Caller) throws -> ProjectConfig {
        try read { try $0.config(of: caller.project) }
    }

    func authenticate(_ idToken: String?, _ caller: Caller) throws -> (Account, TokenIssuer.VerifiedIDToken) {
        try context.authenticate(idToken, caller)
    }

    func requireRecentSignIn(_ account: Account, _ session: TokenIssuer.VerifiedIDToken) throws {
        try context.requireRecentSignIn(account, session)
    }

    public func hash(_ password: String, for caller: Caller) async throws -> PasswordHash {
        try await context.hash(password, for: caller)
    }

    func checkPasswordPolicy(_ password: String, _ caller: Caller) throws {
        try context.checkPasswordPolicy(password, caller)
    }

    func matches(_ password: String, _ stored: PasswordHash, for caller: Caller) async throws -> Bool {
        try await context.matches(password, stored, for: caller)
    }

    func issueTokens(for session: AuthContext.RecordedSignIn, _ caller: Caller) async throws -> SignInResult {
        try await context.issueTokens(for: session, caller)
    }

    func reserveEmail() throws -> (any ActionLinkDelivery)? { try context.reserveEmail() }
    func actionHandler(_ origin: LinkOrigin) throws -> String { try context.actionHandler(origin) }

    func actionLink(
        _ code: String, _ type: OOBCodeIssued.RequestType, _ project: ProjectID, email: String, newEmail: String?,
        handler: String, apiKey: String, continueUrl: String? = nil
    ) -> ActionLink {
        context.actionLink(
            code, type, project, email: email, newEmail: newEmail, handler: handler, apiKey: apiKey, continueUrl: continueUrl)
    }

    func prepareEmailRecovery(from current: String?, origin: LinkOrigin) throws -> EmailRecovery? {
        try context.prepareEmailRecovery(from: current, origin: origin)
    }

    func deliver(_ recovery: EmailRecovery, replaced: String, by account: Account, _ project: ProjectID) {
        context.deliver(recovery, replaced: replaced, by: account, project)
    }
}
