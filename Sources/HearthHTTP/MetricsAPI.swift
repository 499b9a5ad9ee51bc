import HearthAuth
import Hummingbird

/// The Prometheus text of the daemon's metrics (the composition root renders it).
public typealias MetricsExposition = @Sendable () -> String

/// `GET /metrics`: open in development (on loopback); in production only with the operator's
/// token (one for every project), as the figures describe the whole deployment, every
/// project's traffic in it: a project's own admin token gets 403.
struct MetricsAPI: Sendable {
    let access: APIAccess
    let exposition: MetricsExposition

    func handle(_ request: Request) throws -> Response {
        if access.profile == .production {
            guard let admin = try access.admin(request) else { throw FirebaseError.invalidCredentials }
            guard admin.scope == .everyProject else { throw FirebaseError.permissionDenied }
        }
        var response = Response(status: .ok, body: .init(byteBuffer: .init(string: exposition())))
        response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return response
    }
}
