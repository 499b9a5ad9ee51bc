import HearthDomain
import HearthStore
import HearthWire

/// What every flow service shares: the store, tokens, password hashing, settings, limits and
/// delivery, and the write and read helpers. Each flow turns a request into commands run in one
/// store transaction (the writer decides and records), then mints tokens after the commit.
/// Reads come from the projections. CPU-heavy work (password hashing) happens before the
/// transaction, off the event loops.
public final class AuthContext: Sendable {
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
        } catch StoreError.notLeader {
            throw FirebaseError.notLeader
        } catch StoreError.notReplicated {
            throw FirebaseError.notReplicated
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
    static func checkSession(of account: Account, issuedAt: Int64) throws {
        do {
            try account.admitsSession(issuedAt: issuedAt)
        } catch {
            throw FirebaseError(error)
        }
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
