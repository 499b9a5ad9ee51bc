import HearthAuth
import Hummingbird

/// The Prometheus text of the daemon's metrics (the composition root renders it).
public typealias MetricsExposition = @Sendable () -> String

/// `GET /metrics`: open in development (on loopback); in production only with an admin
/// token, as the figures describe the deployment.
struct MetricsAPI: Sendable {
    let access: APIAccess
    let exposition: MetricsExposition

    func handle(_ request: Request) throws -> Response {
        if access.profile == .production {
            guard try access.isAdmin(request) else { throw FirebaseError.invalidCredentials }
        }
        var response = Response(status: .ok, body: .init(byteBuffer: .init(string: exposition())))
        response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return response
    }
}
