import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// `GET /identitytoolkit.googleapis.com/v2/passwordPolicy?key=…`: the project's password
/// policy, which the web SDK's `validatePassword()` fetches (and fetches again after a
/// `PASSWORD_DOES_NOT_MEET_REQUIREMENTS`). Public, as in Firebase: it tells a client what a
/// password needs, nothing about any account.
struct PasswordPolicyAPI: Sendable {
    let projects: ProjectService
    let access: APIAccess

    func handle(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        let caller = try access.resolve(request, context, query: QueryString(request), pathProject: nil).caller
        return JSONResponse.ok(PasswordPolicyJSON.render(try projects.config(caller).passwordPolicy))
    }
}
