import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// `/securetoken.googleapis.com/v1/token`: refresh-token exchange. iOS sends JSON with camelCase
/// keys, the web SDK a form with snake_case keys; both are read the same way.
struct SecureTokenAPI: Sendable {
    let sessions: SessionService
    let access: APIAccess

    func token(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let caller = try access.resolve(request, context, query: QueryString(request), pathProject: nil).caller
        let fields = try await RequestFields.read(request)
        guard let grantType = try fields.string("grantType"), !grantType.isEmpty else {
            throw FirebaseError.bad("MISSING_GRANT_TYPE")
        }
        guard grantType == "refresh_token" else { throw FirebaseError.bad("INVALID_GRANT_TYPE") }
        let refreshed = try await sessions.refresh(try fields.string("refreshToken"), caller)
        return JSONResponse.ok([
            "access_token": .string(refreshed.tokens.idToken), "id_token": .string(refreshed.tokens.idToken),
            "expires_in": .string(String(refreshed.tokens.expiresIn)), "token_type": "Bearer",
            "refresh_token": .string(refreshed.tokens.refreshToken), "user_id": .string(refreshed.account.uid.rawValue),
            "project_id": .string(caller.project.rawValue),
        ])
    }
}
