import HearthCrypto
import HearthDomain
import HearthStore

/// The headful OAuth flow of the SDKs through `/__/auth/handler`, as Firebase runs it: the
/// handler sends the browser to the provider with a `state` bound to the SDK's session, the
/// provider sends it back with a code, the handler hands that URL to the app, and the app's
/// `signInWithIdp` (with the raw session id) has the code exchanged here.
extension SignInService {
    /// Parameters the provider's authorization request sets itself: an app can not replace them.
    public static let reservedParameters: Set<String> = [
        "client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method",
    ]

    /// Records the pending sign-in and returns the provider's authorization URL.
    public func startHeadfulSignIn(_ start: HeadfulRequest, _ caller: Caller) async throws -> String {
        guard let gateway = identityProviders else { throw FirebaseError.bad("OPERATION_NOT_ALLOWED") }
        let provider = try enabledProvider(start.providerId, caller)
        guard mayReturnHeadfulResult(to: start.app, caller) else {
            throw FirebaseError.bad("UNAUTHORIZED_DOMAIN : ((The app is not registered for this project: add it to registeredApps.))")
        }
        try limits?.admitHeadfulStart(caller, now: now)
        let verifier = SecureRandom.string(64, from: UserIDMinter.alphabet)
        let nonce = SecureRandom.string(32, from: UserIDMinter.alphabet)
        let state = PendingAuthorizations.newState()
        let url = try await providerCall(start.providerId, caller) {
            try await gateway.authorizationURL(
                AuthorizationRequest(
                    provider: provider, redirectURI: start.redirectURI, state: state, nonce: nonce,
                    codeChallenge: PendingAuthorizations.codeChallenge(verifier), scopes: start.scopes,
                    customParameters: start.customParameters.filter { !Self.reservedParameters.contains($0.key.lowercased()) },
                    language: start.language))
        }
        // Recorded only once the provider's URL exists: a failed start leaves nothing behind.
        pendingSignIns.insert(
            PendingAuthorizations.Entry(request: start, project: caller.project, codeVerifier: verifier, nonce: nonce, createdAt: now),
            state: state)
        return url
    }

    /// Whether a headful sign-in's result, or its error, may be handed to the app `/__/auth/handler`
    /// was opened for: in production (as Firebase) only to an app registered for the project,
    /// or any app holding the API key could receive a user's sign-in; development takes any app,
    /// as the emulator does.
    public func mayReturnHeadfulResult(to app: [String: String], _ caller: Caller) -> Bool {
        guard settings.registeredAppsOnly else { return true }
        guard let config = try? projectConfig(caller) else { return false }
        if let package = app["apn"], !package.isEmpty { return config.androidPackages.contains(package) }
        return app["ibi"].map(config.iosBundleIds.contains) ?? false
    }

    /// The identity behind a handler's response URL (`requestUri`): the state must be pending
    /// (used once), for this project, API key and provider, and the raw `sessionId` must hash
    /// to the one the handler was opened with; then the code is exchanged.
    public func headfulIdentity(
        requestUri: [String: String], sessionId: String?, providerId: ProviderID?, apiKey: String?, _ caller: Caller
    ) async throws -> FederatedIdentity {
        let spent = FirebaseError.bad("INVALID_IDP_RESPONSE : ((The sign-in expired or was already completed: start it again.))")
        guard let gateway = identityProviders, let state = requestUri["state"], let entry = pendingSignIns.peek(state, now: now)
        else { throw spent }
        guard entry.project == caller.project, apiKey == nil || apiKey == entry.request.apiKey,
            providerId == nil || providerId == entry.request.providerId
        else { throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((The response belongs to another sign-in.))") }
        // Only the app that began the sign-in (it alone knows the raw session id) may use it up.
        guard let sessionId, PendingAuthorizations.sessionHash(sessionId) == entry.request.sessionHash else {
            throw FirebaseError.bad("MISSING_OR_INVALID_NONCE : ((The session id does not match the one the sign-in began with.))")
        }
        guard pendingSignIns.take(state, now: now) != nil else { throw spent }
        guard let code = requestUri["code"], !code.isEmpty else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((The provider returned no authorization code.))")
        }
        let provider = try enabledProvider(entry.request.providerId, caller)
        guard let secret = try clientSecret(of: provider) else {
            throw FirebaseError(AuthError.invalidProjectConfig("\(entry.request.providerId) has no client secret"))
        }
        return try await providerCall(entry.request.providerId, caller) {
            try await gateway.exchange(
                CodeExchange(
                    provider: provider, clientSecret: secret, code: code, redirectURI: entry.request.redirectURI,
                    codeVerifier: entry.codeVerifier, nonce: entry.nonce))
        }
    }

    /// A credential the app brings itself (`postBody` with `id_token` or `access_token`), checked
    /// with the configured provider; `nil` when the project has not configured `providerId`.
    public func directIdentity(
        _ providerId: ProviderID, idToken: String?, accessToken: String?, rawNonce: String?, _ caller: Caller
    ) async throws -> FederatedIdentity? {
        guard let gateway = identityProviders, try projectConfig(caller).identityProvider(providerId) != nil else { return nil }
        let provider = try enabledProvider(providerId, caller)
        let credential = DirectCredential(
            provider: provider, clientSecret: try clientSecret(of: provider), idToken: idToken, accessToken: accessToken,
            rawNonce: rawNonce)
        return try await providerCall(providerId, caller) { try await gateway.verify(credential) }
    }

    private func clientSecret(of provider: IdentityProviderConfig) throws -> String? {
        do {
            return try provider.clientSecret.map { try secrets.open($0) }
        } catch {
            throw FirebaseError(AuthError.invalidProjectConfig("\(provider.providerId)'s client secret can not be read"))
        }
    }

    private func enabledProvider(_ providerId: ProviderID, _ caller: Caller) throws -> IdentityProviderConfig {
        guard let provider = try projectConfig(caller).identityProvider(providerId), provider.enabled else {
            throw FirebaseError.bad("OPERATION_NOT_ALLOWED : ((\(providerId) is not enabled for this project.))")
        }
        return provider
    }

    /// A provider's failure, as the client sees it: one message whatever went wrong (what
    /// answered, what did not, and how, is for the operator's log).
    private func providerCall<R>(_ providerId: ProviderID, _ caller: Caller, _ call: () async throws -> R) async throws -> R {
        do {
            return try await call()
        } catch let failure as IdentityProviderFailure {
            settings.onProviderFailure?(
                ProviderFailureReport(
                    project: caller.project, providerId: providerId, failure: failure, requestId: caller.requestId,
                    clientIp: caller.clientIp))
            if case .unsupported(let reason) = failure {
                throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((\(providerId): \(reason)))")
            }
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((\(providerId): \(Self.providerFailureMessage)))")
        }
    }

    /// What a client is told of any provider failure but `unsupported`.
    public static let providerFailureMessage = "the identity provider's answer could not be obtained or verified"
}

/// A provider call that failed, with the reason, for the log.
public struct ProviderFailureReport: Sendable {
    public var project: ProjectID
    public var providerId: ProviderID
    public var failure: IdentityProviderFailure
    public var requestId: String?
    public var clientIp: String?
}
