import HearthDomain
import HearthStore
import HearthWire

/// Who is calling, as the HTTP layer resolved it: the project every read and write is scoped
/// to, and whether the caller is the project's administrator (`Bearer owner` / admin credential).
public struct Caller: Sendable {
    public var project: ProjectID
    public var isAdmin: Bool
    public var requestId: String?
    public var clientIp: String?
    /// Which admin credential acted, as events record it (`admin:<name>`): the token's configured
    /// name, else a prefix of its SHA-256; `owner` for the development credentials.
    public var adminName: String?
    /// The admin is the operator: its credential covers every project. Only the operator may have
    /// the daemon read files (a provider's `clientSecretFile`); a project's own admin may not,
    /// as those files hold the operator's and other projects' credentials.
    public var isOperator: Bool

    public init(
        project: ProjectID, isAdmin: Bool, requestId: String? = nil, clientIp: String? = nil, adminName: String? = nil,
        isOperator: Bool = false
    ) {
        self.project = project
        self.isAdmin = isAdmin
        self.requestId = requestId
        self.clientIp = clientIp
        self.adminName = isAdmin ? (adminName ?? "owner") : nil
        self.isOperator = isAdmin && isOperator
    }
}

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

public struct AuthSettings: Sendable {
    /// The emulator's fake IdP: unsigned JSON or JWT `id_token`s accepted as federated
    /// credentials. Development profile only.
    public var fakeIdentityProvider = true
    /// Headful sign-ins return only to the project's registered apps (production); development
    /// takes any app, as the emulator does.
    public var registeredAppsOnly = false
    /// Where admins may point a provider's `clientSecretFile` through the API (`nil`: nowhere).
    public var secretFilesDirectory: String?
    /// Whose verified email joins a federated sign-in to the account with that email: Firebase's
    /// rule (only the address's own provider, Google for Gmail) unless development asks for
    /// the emulator's (any verified email).
    public var emailTrust = EmailTrust.authoritativeProviders
    /// How `signInWithCustomToken` checks tokens (emulator rules unless keys are configured).
    public var customTokens = CustomTokenVerifier(acceptsUnsigned: true)
    /// How long an emailed action code stays valid (milliseconds), and any type's own.
    public var oobCodeLifetime: Int64 = 6 * 60 * 60 * 1000
    public var oobCodeLifetimes: [OOBCodeIssued.RequestType: Int64] = [:]
    /// ActionCodeSettings checked and links shaped as Firebase does (production); otherwise the
    /// emulator's leniency: only `continueUrl` is checked, and only for apps.
    public var strictActionCodeSettings = false
    /// The action handler links point at (the app's page that completes a reset, verification or
    /// sign-in). Without it, links point at this server's `/emulator/action` (development only).
    public var actionURL: String?
    /// Firebase's recent-login rule for sensitive changes; `nil` keeps the emulator's leniency.
    public var recentSignIn: RecentSignIn?
    /// Told of every failed identity-provider call, with its reason (the daemon logs it; the
    /// client only hears that the provider failed).
    public var onProviderFailure: (@Sendable (ProviderFailureReport) -> Void)?
    /// Told when an action code that was answered before its write (email enumeration
    /// protection) could not be recorded: the client already had its answer, so only the log
    /// can say that no email went out.
    /// This server's own host names (`publicUrl`'s): never a project's link domain, whose
    /// association files would claim the server's paths (`/__/auth/handler`) for a tenant's app.
    public var serverHosts: Set<String> = []
    public var onUnrecordedActionCode: (@Sendable (_ project: ProjectID, _ requestId: String?, _ error: any Error) -> Void)?

    public init() {}

    func codeLifetime(_ type: OOBCodeIssued.RequestType) -> Int64 {
        oobCodeLifetimes[type] ?? oobCodeLifetime
    }
}

/// The Firebase Auth flows. Each turns a request into commands run in one store transaction
/// (the writer decides and records), then mints tokens after the commit. Reads come from the
/// projections. CPU-heavy work (password hashing) happens before the transaction, off the
/// event loops.
public final class AuthService: Sendable {
    public let store: AccountStore
    public let tokens: TokenIssuer
    public let passwords: PasswordHasher
    /// Development: every link, listed by `/emulator/.../oobCodes`. Production has none.
    public let outbox: Outbox?
    /// Emails the links the client SDKs ask to send (not the ones admins generate).
    public let mailer: (any ActionLinkMailer)?
    public let settings: AuthSettings
    /// Seals identity providers' client secrets for the ledger, opens them for code exchanges.
    public let secrets: SecretSealer
    /// Real identity providers over HTTP (`/__/auth/handler` and its `signInWithIdp`).
    public let identityProviders: (any IdentityProviderGateway)?
    /// Headful sign-ins between the handler and `signInWithIdp`.
    public let pendingSignIns = PendingAuthorizations()
    /// The abuse limits (`nil`: none, the development default, as in the Auth Emulator).
    public let limits: AbuseGuard?

    public init(
        store: AccountStore, tokens: TokenIssuer, passwords: PasswordHasher, outbox: Outbox?,
        mailer: (any ActionLinkMailer)? = nil, identityProviders: (any IdentityProviderGateway)? = nil,
        settings: AuthSettings, limits: AbuseGuard? = nil
    ) {
        self.limits = limits
        self.store = store
        self.tokens = tokens
        self.passwords = passwords
        self.outbox = outbox
        self.mailer = mailer
        self.identityProviders = identityProviders
        self.settings = settings
        secrets = SecretSealer(keyFile: store.directory.secretsKeyFile)
    }

    public var now: Int64 { store.clock.now() }

    /// Lets the signing and hashing threads finish what is queued and end (at shutdown, once no
    /// request can come).
    public func stopWorkers() {
        tokens.signingPool?.stop()
        passwords.stop()
    }

    static func metadata(_ caller: Caller, uid: UserID? = nil) -> Metadata {
        Metadata(
            actor: caller.isAdmin ? .admin : .endUser, actorId: caller.isAdmin ? caller.adminName : uid?.rawValue,
            requestId: caller.requestId, clientIp: caller.clientIp)
    }

    /// Runs a transaction whose refusals reach the client as Firebase errors.
    @discardableResult
    func write<R: Sendable>(
        _ caller: Caller, uid: UserID? = nil, _ body: @escaping @Sendable (StoreTransaction) throws -> R
    ) async throws -> R {
        try await inFirebaseTerms { try await store.transaction(metadata: Self.metadata(caller, uid: uid), body) }
    }

    /// A store call whose refusals and conditions reach the client as Firebase errors.
    func inFirebaseTerms<R>(_ body: () async throws -> R) async throws -> R {
        do {
            return try await body()
        } catch let error as AuthError {
            throw FirebaseError(error)
        } catch StoreError.diskFull {
            throw FirebaseError.diskFull
        } catch StoreError.valueTooLarge {
            // Input rules keep keys under LMDB's 511 bytes; should one slip through, it is still bad input.
            throw FirebaseError.invalidArgument("a value is too long to store")
        }
    }

    func read<R>(_ body: (StoreReader) throws -> R) throws -> R {
        try store.read(body)
    }

    /// The account an ID token speaks for, if the token is ours, current and its account usable.
    public func authenticate(_ idToken: String?, _ caller: Caller) throws -> (Account, TokenIssuer.VerifiedIDToken) {
        guard let idToken, !idToken.isEmpty else { throw FirebaseError.missingIdToken }
        let verified: TokenIssuer.VerifiedIDToken
        do {
            verified = try tokens.verifyIDToken(idToken, project: caller.project, now: now)
        } catch {
            throw error == .expired ? FirebaseError.tokenExpired : FirebaseError.invalidIdToken
        }
        guard let account = try read({ try $0.account(verified.uid, in: caller.project) }) else {
            throw FirebaseError.userNotFound
        }
        try Self.checkSession(of: account, issuedAt: verified.issuedAt)
        return (account, verified)
    }

    /// Refuses a sensitive change (email, password, deletion, linking) by a session that signed
    /// in too long ago, when the recent-login rule is on.
    func requireRecentSignIn(_ account: Account, _ session: TokenIssuer.VerifiedIDToken) throws {
        guard let rule = settings.recentSignIn else { return }
        let authTime: Int64? = if case .int(let seconds)? = session.claims["auth_time"] { seconds } else { nil }
        do {
            try rule.check(account, authTime: authTime, now: now)
        } catch {
            throw FirebaseError(error)
        }
    }

    /// The domain's rule (`Account.admitsSession`), in Firebase's words.
    private static func checkSession(of account: Account, issuedAt: Int64) throws {
        do {
            try account.admitsSession(issuedAt: issuedAt)
        } catch {
            throw FirebaseError(error)
        }
    }

    /// The account an ID token spoke for, read again inside the write that acts on it: a
    /// revocation or a disabling that committed after the token was checked (hashing a new
    /// password takes a while) must stop the request, not be outlived by a fresh session.
    static func stillSignedIn(_ uid: UserID, _ project: ProjectID, since issuedAt: Int64, in tx: StoreTransaction) throws
        -> Account
    {
        let account = try tx.account(uid, project)
        try checkSession(of: account, issuedAt: issuedAt)
        return account
    }

    /// A session a write recorded: the account as the write left it, the session's refresh
    /// token, and the write's instant (ms), the one its events carry.
    struct SignedIn: Sendable {
        var account: Account
        var method: SignInMethod
        var refresh: RefreshToken
        var isNewUser: Bool
        var at: Int64
    }

    /// Runs a sign-in the domain planned: mints the session's refresh token for the planned
    /// account, then records the plan's commands.
    static func run(_ plan: SignInPlan, in tx: StoreTransaction, claims: [String: JSONValue] = [:]) throws -> SignedIn {
        let refresh = TokenIssuer.newRefreshToken(for: plan.uid, method: plan.method, signedInAt: tx.now / 1000, claims: claims)
        for command in plan.commands(refreshTokenHash: refresh.hash) { try tx.execute(command) }
        return SignedIn(
            account: try tx.account(plan.uid, plan.project), method: plan.method, refresh: refresh,
            isNewUser: plan.isNewUser, at: tx.now)
    }

    /// Mints the ID token for a session whose refresh token the transaction just recorded,
    /// issued at the transaction's instant.
    func signedIn(_ session: SignedIn, _ caller: Caller, claims: [String: JSONValue] = [:]) async throws -> SignInResult {
        let idToken = try await tokens.idToken(
            for: session.account, in: caller.project, method: session.method, now: session.at, signedInAt: session.at / 1000,
            extraClaims: claims)
        return SignInResult(
            account: session.account,
            tokens: IssuedTokens(idToken: idToken, refreshToken: session.refresh.text, expiresIn: tokens.lifetime),
            method: session.method, isNewUser: session.isNewUser)
    }

    /// An opaque random id (createAuthUri's `sessionId`): 28 characters of [0-9A-Za-z].
    public static func randomID() -> String {
        SecureRandom.string(28, from: UserIDMinter.alphabet)
    }
}

extension StoreTransaction {
    /// A new uid, minted at the transaction's instant (the one its `account.created` records):
    /// 28 characters of [0-9A-Za-z] that sort by creation time.
    func newUserID() -> UserID {
        UserIDMinter.mint(at: now)
    }

    /// The account as the transaction's commands left it.
    func account(_ uid: UserID, _ project: ProjectID) throws -> Account {
        guard let account = try account(uid, in: project) else { throw FirebaseError.userNotFound }
        return account
    }
}
