import HearthDomain

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
