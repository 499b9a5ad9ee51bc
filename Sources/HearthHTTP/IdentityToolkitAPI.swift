import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The Identity Toolkit API: one handler per `accounts:<method>`, reached from the v1 paths,
/// the admin `/v1/projects/{p}/...` paths and the legacy v3 `relyingparty` aliases (iOS).
struct IdentityToolkitAPI: Sendable {
    let service: AuthService
    let access: APIAccess

    /// A call: the caller, its body and what the request itself says (for links).
    struct Call: Sendable {
        var caller: Caller
        var fields: RequestFields
        var apiKey: String?
        var baseURL: String
        var query: [String: String]
    }

    /// v3 `relyingparty/<name>` -> v1 `accounts:<method>` (emulator 1.4).
    static let legacyAliases: [String: String] = [
        "signupNewUser": "signUp", "verifyPassword": "signInWithPassword", "getAccountInfo": "lookup",
        "setAccountInfo": "update", "deleteAccount": "delete", "createAuthUri": "createAuthUri",
        "getOobConfirmationCode": "sendOobCode", "emailLinkSignin": "signInWithEmailLink",
        "verifyAssertion": "signInWithIdp", "verifyCustomToken": "signInWithCustomToken", "resetPassword": "resetPassword",
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
        let resolved = try access.resolve(request, context, query: query, pathProject: pathProject)
        let fields = request.method == .get ? RequestFields([:]) : try await RequestFields.read(request)
        // Naming another project is an admin's privilege, in the body as in the path.
        if fields.has("targetProjectId") && !resolved.caller.isAdmin {
            throw FirebaseError.bad("INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
        }
        let call = Call(
            caller: resolved.caller, fields: fields, apiKey: resolved.apiKey, baseURL: request.baseURL, query: query.values)
        let body: JSONValue =
            switch method {
            case "signUp": try await signUp(call)
            case "signInWithPassword": try await signInWithPassword(call)
            case "signInWithCustomToken": try await signInWithCustomToken(call)
            case "lookup": try lookup(call)
            case "update": try await update(call)
            case "delete": try await delete(call)
            case "createAuthUri": try createAuthUri(call)
            case "sendOobCode": try await sendOobCode(call)
            case "signInWithEmailLink": try await signInWithEmailLink(call)
            case "resetPassword": try await resetPassword(call)
            case "signInWithIdp": try await signInWithIdp(call)
            case "batchGet": try batchGet(call)
            case "batchDelete": try await batchDelete(call)
            case "batchCreate": try await batchCreate(call)
            case "query": try queryAccounts(call)
            case "createSessionCookie": try createSessionCookie(call)
            default: throw FirebaseError.notFound
            }
        return JSONResponse.ok(body)
    }

    /// Links carry the caller's API key, or (Admin SDK calls have none) one the project registered.
    func linkOrigin(_ call: Call) -> AuthService.LinkOrigin {
        AuthService.LinkOrigin(baseURL: call.baseURL, apiKey: call.apiKey ?? access.linkKey(for: call.caller.project))
    }

    func requireAdmin(_ call: Call) throws {
        guard call.caller.isAdmin else { throw FirebaseError.insufficientPermission }
    }
}
