import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import Hummingbird

/// Cross-origin calls from web apps (the Firebase JS SDK calls the API with `fetch`), as the
/// Auth Emulator and Google's endpoints answer them: every route answers a preflight (204,
/// the origin and the requested headers reflected, private-network access granted when asked,
/// except in development unless `developmentBrowserAdmin`; cached an hour), and every answer, errors included, carries `Access-Control-Allow-Origin`
/// so the SDK can read Firebase's error codes.
///
/// Development allows any origin, as the emulator does. Production allows only origins whose
/// host is one of the project's authorized domains (the project the request's API key, or
/// its `projects/{p}` path, names); any other origin is refused with a 403 before any work.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let projects: ProjectService
    let access: APIAccess

    static var allowedMethods: String { "GET, HEAD, POST, PATCH, PUT, DELETE" }
    static var maxAgeSeconds: String { "3600" }
    static var requestPrivateNetwork: HTTPField.Name { HTTPField.Name("Access-Control-Request-Private-Network")! }
    static var allowPrivateNetwork: HTTPField.Name { HTTPField.Name("Access-Control-Allow-Private-Network")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A page of this server's own origin (the console's) is no cross-origin caller.
        guard let origin = request.headers[.origin], !request.isSameOrigin else { return try await next(request, context) }
        guard try allows(origin, request) else {
            return JSONResponse.error(
                FirebaseError(
                    httpStatus: 403,
                    message:
                        "UNAUTHORIZED_DOMAIN : ((The origin \(origin.prefix(200)) is not an authorized domain of this project; add its host to authorizedDomains.))",
                    status: "PERMISSION_DENIED", reason: "forbidden"))
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [
                .accessControlAllowOrigin: origin, .accessControlAllowMethods: Self.allowedMethods,
                .accessControlMaxAge: Self.maxAgeSeconds, .vary: "Origin, Access-Control-Request-Headers",
            ]
            if let requested = request.headers[.accessControlRequestHeaders] { headers[.accessControlAllowHeaders] = requested }
            if request.headers[Self.requestPrivateNetwork]?.lowercased() == "true" {
                // A page on a public origin asks to reach this private address: in development,
                // that is any web site the developer visits reaching their local Hearth.
                guard access.profile == .production || access.ownerFromBrowsers else {
                    return JSONResponse.error(Self.privateNetworkRefused)
                }
                headers[Self.allowPrivateNetwork] = "true"
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
        return response
    }

    static var privateNetworkRefused: FirebaseError {
        FirebaseError(
            httpStatus: 403,
            message:
                "PERMISSION_DENIED : ((Pages on public origins may not reach a development Hearth; set developmentBrowserAdmin to allow it.))",
            status: "PERMISSION_DENIED", reason: "forbidden")
    }

    private func allows(_ origin: String, _ request: Request) throws -> Bool {
        guard access.profile == .production else { return true }
        guard let host = URL(string: origin)?.host, let project = project(of: request) else { return false }
        return try projects.authorizes(host: host, in: project)
    }

    /// The project a request is for, as far as a preflight can tell (it carries no headers of
    /// the app's): the `projects/{p}` of its path, which is the project the call acts on, else
    /// its API key's. (A key of an origin's own project must not open another project's path.)
    private func project(of request: Request) -> ProjectID? {
        let components = request.uri.path.split(separator: "/")
        if let index = components.firstIndex(of: "projects"), index + 1 < components.count {
            return ProjectID(String(components[index + 1].prefix { $0 != ":" }))
        }
        return QueryString(request)["key"].flatMap { access.apiKeys[$0] }
    }
}
