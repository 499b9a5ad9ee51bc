import Foundation
import HearthAuth
import HearthDomain
import HTTPTypes
import Hummingbird

/// Cross-origin calls from web apps (the Firebase JS SDK calls the API with `fetch`), as the
/// Auth Emulator and Google's endpoints answer them: every route answers a preflight (204,
/// the origin and the requested headers reflected, private-network access granted when asked,
/// cached an hour), and every answer, errors included, carries `Access-Control-Allow-Origin`
/// so the SDK can read Firebase's error codes.
///
/// Development allows any origin, as the emulator does. Production allows only origins whose
/// host is one of the project's authorized domains (the project the request's API key, or
/// its `projects/{p}` path, names); any other origin is refused with a 403 before any work.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let service: AuthService
    let access: APIAccess

    static var allowedMethods: String { "GET, HEAD, POST, PATCH, PUT, DELETE" }
    static var maxAgeSeconds: String { "3600" }
    static var requestPrivateNetwork: HTTPField.Name { HTTPField.Name("Access-Control-Request-Private-Network")! }
    static var allowPrivateNetwork: HTTPField.Name { HTTPField.Name("Access-Control-Allow-Private-Network")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        guard try allows(origin, request) else {
            return JSONResponse.error(
                FirebaseError(
                    httpStatus: 403,
                    message: "UNAUTHORIZED_DOMAIN : ((The origin \(origin.prefix(200)) is not an authorized domain of this project; add its host to authorizedDomains.))",
                    status: "PERMISSION_DENIED", reason: "forbidden"))
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [
                .accessControlAllowOrigin: origin, .accessControlAllowMethods: Self.allowedMethods,
                .accessControlMaxAge: Self.maxAgeSeconds, .vary: "Origin, Access-Control-Request-Headers",
            ]
            if let requested = request.headers[.accessControlRequestHeaders] { headers[.accessControlAllowHeaders] = requested }
            if request.headers[Self.requestPrivateNetwork]?.lowercased() == "true" { headers[Self.allowPrivateNetwork] = "true" }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
        return response
    }

    private func allows(_ origin: String, _ request: Request) throws -> Bool {
        guard access.profile == .production else { return true }
        guard let host = URL(string: origin)?.host, let project = project(of: request) else { return false }
        return try service.authorizes(host: host, in: project)
    }

    /// The project a request is for, as far as a preflight can tell (it carries no headers of
    /// the app's): its API key, else the `projects/{p}` of its path.
    private func project(of request: Request) -> ProjectID? {
        if let key = QueryString(request)["key"] { return access.apiKeys[key] }
        let components = request.uri.path.split(separator: "/")
        guard let index = components.firstIndex(of: "projects"), index + 1 < components.count else { return nil }
        return ProjectID(String(components[index + 1].prefix { $0 != ":" }))
    }
}
