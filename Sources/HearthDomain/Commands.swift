/// What a caller asks the ledger to do. `decide` turns a command into events or an `AuthError`.
/// Expensive or remote work (hashing a password, exchanging an OAuth code) happens before a
/// command is made, so commands carry results (a hash, a verified provider identity).
public enum Command: Equatable, Sendable {
    case createAccount(ProjectID, UserID, AccountCreated)
    /// An import with `allowOverwrite`: the account (if any) is deleted and created anew from
    /// the record, whole; nothing of the old one is kept but its uid, and its sessions end.
    case replaceAccount(ProjectID, UserID, AccountCreated)
    /// One account of an import (`accounts:batchCreate`): created (or, `overwrite`, replacing
    /// the uid's account) with the second factors it had (`mfaInfo`).
    case importAccount(ProjectID, UserID, AccountCreated, secondFactors: [SecondFactor], overwrite: Bool)
    /// A completed sign-in; with a refresh token hash it also starts a session.
    case signIn(ProjectID, UserID, method: SignInMethod, refreshTokenHash: String?)
    /// A signed-in session goes on in a new refresh token after a change that ended every session
    /// (the caller's own included): not a new sign-in, so no sign-in method's switch refuses it.
    case continueSession(ProjectID, UserID, method: SignInMethod, refreshTokenHash: String?)
    case linkProvider(ProjectID, UserID, ProviderLink)
    case unlinkProviders(ProjectID, UserID, [ProviderID])
    /// Sets the password; with `email`, also gives the account that email (how an anonymous
    /// user upgrades to email+password).
    case setPassword(ProjectID, UserID, PasswordHash, email: String?, reason: PasswordSet.Reason)
    /// Email-link sign-in completed for `email` on this account (proving the email verifies it,
    /// removes what was added while it was unverified and revokes earlier sessions).
    case completeEmailLinkSignIn(ProjectID, UserID, email: String, refreshTokenHash: String?)
    /// A trusted identity provider vouched for the account's own email (signInWithIdp with a
    /// verified email): the same rule as an email link, an unverified password goes.
    case confirmEmailByProvider(ProjectID, UserID, email: String)
    /// An email link proved `email` for this account, without (yet) signing in: the part of
    /// `completeEmailLinkSignIn` an account with a second factor gets before its second step.
    case proveEmailByLink(ProjectID, UserID, email: String)
    case enrollSecondFactor(ProjectID, UserID, SecondFactor)
    /// Removes a factor; the account's sessions end with it.
    case withdrawSecondFactor(ProjectID, UserID, enrollmentId: String, by: SecondFactorWithdrawn.Actor)
    /// A factor's code for time `step` was right. `pendingSince`: when the first factor of the
    /// sign-in it completes was passed (the pending credential's instant), so that a credential
    /// serves one sign-in, within `SecondFactorRules.pendingCredentialLifetime`.
    case useSecondFactor(ProjectID, UserID, enrollmentId: String, step: Int64, pendingSince: Int64)
    /// A password-reset code sent to `email` at `codeIssuedAt` was used: the new password
    /// replaces the old one, unless a password was set after the code was sent.
    case resetPassword(ProjectID, UserID, PasswordHash, email: String, codeIssuedAt: Int64)
    /// A VERIFY_EMAIL code sent to `email` was used (or, with `newEmail`, a
    /// VERIFY_AND_CHANGE_EMAIL code: the account moves to the address that received it).
    case applyEmailCode(ProjectID, UserID, email: String, newEmail: String?)
    case update(ProjectID, UserID, AccountUpdate)
    case revokeRefreshToken(ProjectID, UserID, tokenHash: String)
    case deleteAccount(ProjectID, UserID, by: AccountDeleted.Actor)
    /// One account of the Admin SDK's batch delete (`delete_users`): a missing one counts as
    /// deleted (no event), and without `force` only a disabled one goes (Firebase's
    /// `NOT_DISABLED`), decided inside the write that deletes it.
    case batchDeleteAccount(ProjectID, UserID, force: Bool)
    /// A signed-in user links a password (`signUp` with an ID token): the first password on an
    /// account without another email is set; replacing a password or an email is an update by
    /// the account holder, which ends the sessions opened before.
    case linkPassword(ProjectID, UserID, PasswordHash, email: String)
    case purgeAnonymous(ProjectID, UserID)
    /// Forgets an account's personal data on request (its key is destroyed) and ends it.
    case eraseAccount(ProjectID, UserID, reason: String)
    case issueOOBCode(ProjectID, codeHash: String, OOBCodeIssued)
    case consumeOOBCode(ProjectID, codeHash: String)
    /// The sweep: a code past its expiry, never used, forgets its addresses.
    case expireOOBCode(ProjectID, codeHash: String)
    case changeProjectConfig(ProjectID, ProjectConfigChange)
    /// Creates (`creating`) or replaces a provider's configuration.
    case setIdentityProvider(ProjectID, IdentityProviderConfig, creating: Bool)
    case deleteIdentityProvider(ProjectID, ProviderID)

    /// The one stream a command appends to (and checks the expected version of).
    public var stream: StreamID {
        switch self {
        case .createAccount(let project, let uid, _), .replaceAccount(let project, let uid, _), .signIn(let project, let uid, _, _),
            .importAccount(let project, let uid, _, _, _),
            .continueSession(let project, let uid, _, _),
            .linkProvider(let project, let uid, _), .unlinkProviders(let project, let uid, _),
            .setPassword(let project, let uid, _, _, _), .completeEmailLinkSignIn(let project, let uid, _, _),
            .confirmEmailByProvider(let project, let uid, _), .resetPassword(let project, let uid, _, _, _),
            .proveEmailByLink(let project, let uid, _), .enrollSecondFactor(let project, let uid, _),
            .withdrawSecondFactor(let project, let uid, _, _), .useSecondFactor(let project, let uid, _, _, _),
            .applyEmailCode(let project, let uid, _, _),
            .update(let project, let uid, _), .revokeRefreshToken(let project, let uid, _),
            .deleteAccount(let project, let uid, _), .batchDeleteAccount(let project, let uid, _),
            .linkPassword(let project, let uid, _, _), .purgeAnonymous(let project, let uid),
            .eraseAccount(let project, let uid, _):
            .account(project, uid)
        case .issueOOBCode(let project, let hash, _), .consumeOOBCode(let project, let hash),
            .expireOOBCode(let project, let hash):
            .oobCode(project, hash)
        case .changeProjectConfig(let project, _), .setIdentityProvider(let project, _, _),
            .deleteIdentityProvider(let project, _):
            .project(project)
        }
    }
}

/// An `accounts:update`: every field optional; several may change in one command.
public struct AccountUpdate: Equatable, Sendable {
    public var email: String?
    /// `deleteAttribute: EMAIL`: the account loses its email (a new `email` wins over this).
    public var removeEmail = false
    public var emailVerified: Bool?
    public var password: PasswordHash?
    public var profile = ProfileUpdated()
    /// `.some(nil)` clears the claims.
    public var customClaims: String??
    public var disabled: Bool?
    /// An explicit revocation of the account's sessions (refresh tokens, and ID tokens issued
    /// before it). A new password or email revokes them whether or not this is set.
    public var revokeSessions: SessionRevocation?
    public var unlinkProviders: [ProviderID] = []
    /// `deleteAttribute: PASSWORD`: the password goes, the email and email link stay (unlike
    /// unlinking the `password` provider).
    public var removePassword = false
    /// The account's own user asks (an ID token), not an administrator: a new password then
    /// needs the Email/Password provider on.
    public var byAccountHolder = false

    public init(
        email: String? = nil, removeEmail: Bool = false, emailVerified: Bool? = nil, password: PasswordHash? = nil,
        profile: ProfileUpdated = ProfileUpdated(), customClaims: String?? = nil, disabled: Bool? = nil,
        revokeSessions: SessionRevocation? = nil, unlinkProviders: [ProviderID] = []
    ) {
        self.email = email
        self.removeEmail = removeEmail
        self.emailVerified = emailVerified
        self.password = password
        self.profile = profile
        self.customClaims = customClaims
        self.disabled = disabled
        self.revokeSessions = revokeSessions
        self.unlinkProviders = unlinkProviders
    }
}

/// When revoked sessions end: at the write's own instant (a user's request), or at a second an
/// administrator chose (the Admin SDK's `validSince`), from 1970 to an hour past the write's
/// instant (clock skew between the Admin SDK's host and this one).
public enum SessionRevocation: Equatable, Sendable {
    case now
    case since(seconds: Int64)

    public static let allowedSkewSeconds: Int64 = 3600
}

/// What `decide` may read: the write model, served by the projections inside the writer's
/// transaction (so it includes earlier commands of the same batch).
public protocol DecisionState {
    func account(_ uid: UserID, in project: ProjectID) throws -> Account?
    func owner(ofEmail email: String, in project: ProjectID) throws -> UserID?
    func owner(ofProvider providerId: ProviderID, federatedId: String, in project: ProjectID) throws -> UserID?
    func owner(ofPhone phoneNumber: String, in project: ProjectID) throws -> UserID?
    func config(of project: ProjectID) throws -> ProjectConfig
    func oobCode(_ codeHash: String, in project: ProjectID) throws -> OOBCode?
    /// When (and by which rule) the cleanup schedule will purge this anonymous account.
    func cleanupSchedule(_ uid: UserID, in project: ProjectID) throws -> CleanupSchedule?
}
