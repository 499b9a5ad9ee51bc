import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The Identity Toolkit API: one handler per `accounts:<method>`, reached from the v1 paths,
/// the admin `/v1/projects/{p}/...` paths and the legacy v3 `relyingparty` aliases (iOS).
struct IdentityToolkitAPI: Sendable {
    let access: APIAccess
    let signIn: SignInEndpoints
    let account: AccountEndpoints
    let email: EmailEndpoints
    let admin: AdminEndpoints
    let multiFactor: MultiFactorEndpoints

    init(services: AuthServices, access: APIAccess) {
        self.access = access
        signIn = SignInEndpoints(signIn: services.signIn, accounts: services.accounts, projects: services.projects)
        account = AccountEndpoints(accounts: services.accounts, actionCodes: services.actionCodes)
        email = EmailEndpoints(actionCodes: services.actionCodes)
        admin = AdminEndpoints(accounts: services.accounts, sessions: services.sessions, projects: services.projects)
        multiFactor = MultiFactorEndpoints(secondFactors: services.secondFactors)
    }

    /// v3 `relyingparty/<name>` -> v1 `accounts:<method>` (emulator 1.4).
    static let legacyAliases: [String: String] = [
        "signupNewUser": "signUp", "verifyPassword": "signInWithPassword", "getAccountInfo": "lookup",
        "setAccountInfo": "update", "deleteAccount": "delete", "createAuthUri": "createAuthUri",
        "getOobConfirmationCode": "sendOobCode", "emailLinkSignin": "signInWithEmailLink",
        "verifyAssertion": "signInWithIdp", "verifyCustomToken": "signInWithCustomToken", "resetPassword": "resetPassword",
        // The Admin SDKs' older paths for listing and importing users.
        "downloadAccount": "batchGet", "uploadAccount": "batchCreate",
    ]

    /// The `accounts:<method>` operations served (metrics name routes by them).
    static let operations: Set<String> = [
        "signUp", "signInWithPassword", "signInWithCustomToken", "lookup", "update", "delete", "createAuthUri", "sendOobCode",
        "signInWithEmailLink", "resetPassword", "signInWithIdp", "batchGet", "batchDelete", "batchCreate", "query",
        "createSessionCookie", "accounts", "queryAccounts",
    ]

    func handle(method: String, pathProject: Substring?, _ request: Request, _ context: some RemoteAddressRequestContext) async throws
        -> Response
    {
        let query = QueryString(request)
        var resolved = try access.resolve(request, context, query: query, pathProject: pathProject)
        let fields = request.method == .get ? RequestFields([:]) : try await RequestFields.read(request)
        // Naming another project is an admin's privilege, in the body as in the path.
        if fields.has("targetProjectId") && !resolved.caller.isAdmin {
            throw FirebaseError.bad("INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
        }
        // The legacy paths have no project in them: an admin names it in the body.
        if pathProject == nil, let target = try fields.string("targetProjectId") {
            resolved = try access.resolve(request, context, query: query, pathProject: Substring(target))
        }
        let call = ToolkitCall(
            caller: resolved.caller, fields: fields, apiKey: resolved.apiKey, baseURL: request.baseURL, query: query.values,
            access: access)
        let body: JSONValue
        do {
            body = try await answer(method, call)
        } catch let required as SecondFactorRequired {
            // A first factor passed on an account with a second: Firebase's 200 with the
            // pending credential, which the SDKs turn into their multi-factor error.
            var challenge = MultiFactorEndpoints.challenge(required)
            if let kind = Self.responseKinds[method] { challenge["kind"] = .string(kind) }
            if method == "signInWithPassword" { challenge["registered"] = true }
            if method == "signInWithEmailLink" { challenge["isNewUser"] = .bool(required.isNewUser) }
            body = .object(challenge)
        }
        return JSONResponse.ok(body)
    }
}

extension IdentityToolkitAPI {
    private func answer(_ method: String, _ call: ToolkitCall) async throws -> JSONValue {
        switch method {
        case "signUp": try await signIn.signUp(call)
        case "signInWithPassword": try await signIn.signInWithPassword(call)
        case "signInWithCustomToken": try await signIn.signInWithCustomToken(call)
        case "lookup": try account.lookup(call)
        case "update": try await account.update(call)
        case "delete": try await account.delete(call)
        case "createAuthUri": try signIn.createAuthUri(call)
        case "sendOobCode": try await email.sendOobCode(call)
        case "signInWithEmailLink": try await signIn.signInWithEmailLink(call)
        case "resetPassword": try await email.resetPassword(call)
        case "signInWithIdp": try await signIn.signInWithIdp(call)
        case "batchGet": try admin.batchGet(call)
        case "batchDelete": try await admin.batchDelete(call)
        case "batchCreate": try await admin.batchCreate(call)
        case "query": try admin.queryAccounts(call)
        case "createSessionCookie": try admin.createSessionCookie(call)
        case MultiFactorEndpoints.startEnrolment: try multiFactor.startEnrolment(call)
        case MultiFactorEndpoints.finalizeEnrolment: try await multiFactor.finalizeEnrolment(call)
        case MultiFactorEndpoints.withdraw: try await multiFactor.withdraw(call)
        case MultiFactorEndpoints.startSignIn: try multiFactor.startSignIn(call)
        case MultiFactorEndpoints.finalizeSignIn: try await multiFactor.finalizeSignIn(call)
        default: throw FirebaseError.notFound
        }
    }

    /// The `kind` of each sign-in's answer, which its second-factor challenge keeps.
    static let responseKinds = [
        "signInWithPassword": "identitytoolkit#VerifyPasswordResponse",
        "signInWithCustomToken": "identitytoolkit#VerifyCustomTokenResponse",
        "signInWithEmailLink": "identitytoolkit#EmailLinkSigninResponse",
    ]
}

/// A call: the caller, its body and what the request itself says (for links).
struct ToolkitCall: Sendable {
    var caller: Caller
    var fields: RequestFields
    var apiKey: String?
    var baseURL: String
    var query: [String: String]
    let access: APIAccess

    /// Links carry the caller's API key, or (Admin SDK calls have none) one the project registered.
    var linkOrigin: LinkOrigin {
        LinkOrigin(baseURL: baseURL, apiKey: apiKey ?? access.linkKey(for: caller.project))
    }

    func requireAdmin() throws {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
    }
}
