import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird
import HummingbirdCore

/// Every route Hearth serves, at the paths the Firebase SDKs use (each Google host becomes a
/// path prefix, as in the Auth Emulator).
public enum HearthRouter {
    /// HTTP/1.1 that closes connections idle for `idleTimeout`, and (a `RequestGuard` per
    /// connection) requests not received within `requestTimeLimit` or rejected by the parser,
    /// with the Firebase envelope, after answering the requests pipelined before them; the
    /// `governor` holds every connection to its address's share and the server's budget of
    /// buffered request bytes.
    public static func server(
        idleTimeout: Duration, requestTimeLimit: RequestTimeLimit, governor: ConnectionGovernor
    ) -> HTTPServerBuilder {
        .http1(
            configuration: .init(
                additionalChannelHandlers: [RequestGuard(limit: requestTimeLimit, governor: governor)],
                idleTimeout: .init(idleTimeout)))
    }

    /// Seconds a verifier may cache the ID-token key set (Firebase's says a few hours). Kept to
    /// an hour because a verifier sees a key replaced in the data directory only when its cache
    /// expires: until then it refuses the new key's tokens.
    static let keySetMaxAge = TokenIssuer.keySetMaxAge

    /// `readiness`: what `/readyz` checks (none: ready whenever the process answers).
    /// `forwarding`: in a cluster, how a follower asks its leader (`LeaderForwarding`).
    public static func build<Context: RemoteAddressRequestContext>(
        services: AuthServices, access: APIAccess, publicURL: String? = nil, readiness: @escaping ReadinessProbe = { [] },
        metrics: @escaping MetricsExposition = { "" }, forwarding: LeaderForwarding? = nil,
        context: Context.Type = HearthRequestContext.self
    ) -> Router<Context> {
        let router = Router(context: Context.self)
        router.add(middleware: RequestLogMiddleware<Context>(access: access))
        // Outside the error envelope, so errors carry the CORS headers too (the JS SDK reads their codes).
        router.add(middleware: CORSMiddleware<Context>(projects: services.projects, access: access))
        router.add(middleware: FirebaseErrorMiddleware<Context>())
        if let forwarding { router.add(middleware: LeaderForwardingMiddleware<Context>(forwarding: forwarding, access: access)) }
        let toolkit = IdentityToolkitAPI(services: services, access: access)
        let secureToken = SecureTokenAPI(sessions: services.sessions, access: access)

        router.get("/") { _, _ in
            JSONResponse.ok(["authEmulator": ["ready": true, "server": "hearth"]])
        }
        // For load balancers and monitors: not under the Google path prefixes.
        let readinessCache = ReadinessCache(readiness, now: { services.context.now })
        let health = HealthAPI(readiness: readinessCache, access: access)
        router.get("/healthz") { _, _ in health.healthz() }
        router.get("/readyz") { request, _ in await health.readyz(request) }
        let metricsAPI = MetricsAPI(access: access, exposition: metrics)
        router.get("/metrics") { request, _ in try metricsAPI.handle(request) }
        router.get("/.well-known/jwks.json") { _, _ in
            // Verifiers cache the keys as Firebase's JWKS tells them to (`public, max-age`): a
            // rotation publishes a new key at least this long before it signs anything.
            var response = JSONResponse.ok(["keys": .array(services.context.tokens.keyring.published.map(\.publicJWK))])
            response.headers[.cacheControl] = "public, max-age=\(Self.keySetMaxAge), must-revalidate, no-transform"
            return response
        }
        // /identitytoolkit.googleapis.com/v1/accounts:<method> and /v1/projects/{p}/...; one
        // catch-all per method, parsed here, because ':' sits inside path components.
        let identityToolkit: @Sendable (Request, Context) async throws -> Response = { request, context in
            let (method, project) = try Self.identityToolkitOperation(context.parameters.getCatchAll())
            // Only batchGet is a GET (Admin list_users); every other operation is a POST.
            guard (method == "batchGet") == (request.method == .get) else { throw FirebaseError.notFound }
            return try await toolkit.handle(method: method, pathProject: project, request, context)
        }
        router.post("/identitytoolkit.googleapis.com/v1/**", use: identityToolkit)
        router.get("/identitytoolkit.googleapis.com/v1/**", use: identityToolkit)
        router.post("/www.googleapis.com/identitytoolkit/v3/relyingparty/{name}") { request, context in
            guard let method = context.parameters.get("name").flatMap({ IdentityToolkitAPI.legacyAliases[$0] }) else {
                throw FirebaseError.notFound
            }
            return try await toolkit.handle(method: method, pathProject: nil, request, context)
        }
        router.post("/securetoken.googleapis.com/v1/token") { request, context in
            try await secureToken.token(request, context)
        }
        // Identity Platform's v2 account operations: second factors.
        router.post("/identitytoolkit.googleapis.com/v2/accounts/{operation}") { request, context in
            let operation = "v2/" + (context.parameters.get("operation") ?? "")
            guard MultiFactorEndpoints.operations.contains(operation) else { throw FirebaseError.notFound }
            return try await toolkit.handle(method: operation, pathProject: nil, request, context)
        }
        let passwordPolicy = PasswordPolicyAPI(projects: services.projects, access: access)
        router.get("/identitytoolkit.googleapis.com/v2/passwordPolicy") { request, context in
            try passwordPolicy.handle(request, context)
        }
        let projectConfig = ProjectConfigAPI(projects: services.projects, access: access)
        router.get("/identitytoolkit.googleapis.com/v2/projects/{project}/config") { request, context in
            try await projectConfig.handle(request, context)
        }
        router.patch("/identitytoolkit.googleapis.com/v2/projects/{project}/config") { request, context in
            try await projectConfig.handle(request, context)
        }
        for kind in [IdentityProviderJSON.Kind.defaultSupported, .openIDConnect] {
            let providers = IdentityProviderAPI(projects: services.projects, access: access, kind: kind)
            let path = "/identitytoolkit.googleapis.com/v2/projects/{project}/\(kind.collection)"
            router.get(RouterPath(path)) { request, context in try await providers.collection(request, context) }
            router.post(RouterPath(path)) { request, context in try await providers.collection(request, context) }
            for method in [HTTPRequest.Method.get, .patch, .delete] {
                router.on(RouterPath(path + "/{idp}"), method: method) { request, context in
                    try await providers.item(request, context)
                }
            }
        }
        // Link domains (by Host): the apps' association files, and the page for a link that
        // reached a browser instead of its app.
        let appLinks = AppLinksAPI(projects: services.projects)
        router.get("/.well-known/apple-app-site-association") { request, _ in try appLinks.appleAppSiteAssociation(request) }
        router.get("/.well-known/assetlinks.json") { request, _ in try appLinks.assetLinks(request) }
        if appLinks.actionURL != nil, !AppLinksAPI.isHearthPath(appLinks.linkPath) {
            router.get(RouterPath(appLinks.linkPath)) { request, _ in try appLinks.linkPage(request) }
        }
        let handler = OAuthHandlerPage(signIn: services.signIn, access: access, publicURL: publicURL)
        router.get("/__/auth/handler") { request, context in try await handler.handle(request, context) }
        if access.profile == .production {
            // SDKs pointed at Hearth with useEmulator open the emulator's path; in production
            // it is the real handler (development keeps its fake IdP page there).
            router.get("/emulator/auth/handler") { request, context in try await handler.handle(request, context) }
        }
        let cleanup = CleanupAPI(projects: services.projects, access: access)
        router.get("/hearth/v1/projects/{project}/cleanup") { request, context in try await cleanup.status(request, context) }
        router.get("/hearth/v1/projects/{project}/cleanup/preview") { request, context in
            try await cleanup.preview(request, context)
        }
        let keys = KeysAPI(keys: services.keys, access: access)
        router.get("/hearth/v1/keys") { request, _ in try keys.status(request) }
        router.post("/hearth/v1/keys/rotate") { request, context in try await keys.rotate(request, context) }
        let erasure = ErasureAPI(accounts: services.accounts, access: access)
        router.post("/hearth/v1/projects/{project}/accounts/{uid}/erase") { request, context in
            try await erasure.erase(request, context)
        }
        if access.console {
            let console = ConsoleAPI(
                accounts: services.accounts, actionCodes: services.actionCodes, projects: services.projects, readiness: readinessCache,
                metrics: metrics, access: access,
                secrets: services.context.secrets,
                secureCookies: publicURL?.lowercased().hasPrefix("https://") == true, now: { services.context.now })
            router.get("/console") { request, context in try await console.overview(request, context) }
            router.get("/console/users") { request, context in try console.users(request, context) }
            router.get("/console/users/{uid}") { request, context in try console.account(request, context) }
            router.post("/console/users/{uid}/{action}") { request, context in try await console.changeAccount(request, context) }
            router.get("/console/add-user") { request, context in try console.newUserPage(request, context) }
            router.get("/console/project") { request, context in try console.project(request, context) }
            router.post("/console/project") { request, context in try await console.changeProject(request, context) }
            router.post("/console/project-choice") { request, context in try await console.chooseProject(request, context) }
            router.get("/console/cleanup") { request, context in try await console.cleanup(request, context) }
            router.post("/console/cleanup") { request, context in try await console.changeCleanup(request, context) }
            router.post("/console/add-user") { request, context in try await console.addUser(request, context) }
            router.get("/console/sign-in") { request, context in try console.signInPage(request, context) }
            router.post("/console/sign-in") { request, context in try await console.signIn(request, context) }
            router.post("/console/sign-out") { request, context in try await console.signOut(request, context) }
            router.get("/console/assets/console.css") { _, _ in ConsolePage.stylesheet() }
        }
        if access.profile == .development {
            let emulator = EmulatorAPI(
                projects: services.projects, accounts: services.accounts, actionCodes: services.actionCodes, access: access)
            router.delete("/emulator/v1/projects/{project}/accounts") { request, context in
                try await emulator.deleteAccounts(request, context)
            }
            router.get("/emulator/v1/projects/{project}/oobCodes") { request, context in
                try emulator.oobCodes(request, context)
            }
            router.get("/emulator/v1/projects/{project}/config") { request, context in
                try await emulator.config(request, context)
            }
            router.patch("/emulator/v1/projects/{project}/config") { request, context in
                try await emulator.config(request, context)
            }
            let actionPage = EmulatorActionPage(actionCodes: services.actionCodes, project: access.defaultProject)
            router.get("/emulator/action") { request, context in
                try await actionPage.handle(request, context)
            }
            let identityProvider = EmulatorIdPPage(accounts: services.accounts, project: access.defaultProject)
            router.get("/emulator/auth/handler") { request, context in
                try await identityProvider.handle(request, context)
            }
        }
        return router
    }

    /// `accounts:signUp` -> ("signUp", nil); `projects/p/accounts:lookup` -> ("lookup", "p");
    /// `projects/p/accounts` -> ("signUp", "p") (Admin create_user).
    static func identityToolkitOperation(_ components: [Substring]) throws -> (String, Substring?) {
        switch components.count {
        case 1 where components[0].hasPrefix("accounts:"):
            return (String(components[0].dropFirst("accounts:".count)), nil)
        case 2 where components[0] == "projects":
            // projects/{p}:createSessionCookie, projects/{p}:queryAccounts
            let parts = components[1].split(separator: ":", maxSplits: 1)
            if parts.count == 2, ["createSessionCookie", "queryAccounts"].contains(parts[1]) {
                return (parts[1] == "queryAccounts" ? "query" : String(parts[1]), parts[0])
            }
        case 3 where components[0] == "projects":
            if components[2] == "accounts" { return ("signUp", components[1]) }
            if components[2].hasPrefix("accounts:") { return (String(components[2].dropFirst("accounts:".count)), components[1]) }
        default:
            break
        }
        throw FirebaseError.notFound
    }
}
