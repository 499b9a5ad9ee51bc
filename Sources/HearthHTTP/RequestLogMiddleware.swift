import CoreMetrics
import HTTPTypes
import Hummingbird
import Logging

/// One line per request at `info`: method, path (never the query: it may carry codes or
/// tokens), status, latency, request id and client address. The request id is also the
/// response's `X-Request-Id` and the `requestId` of every event the request records.
struct RequestLogMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let access: APIAccess
    static var requestIdHeader: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[Self.requestIdHeader] = context.id
        let elapsed = start.duration(to: .now)
        let route = Self.route(request, context)
        Counter(label: "hearth_http_requests_total", dimensions: [("route", route), ("status", String(response.status.code))]).increment()
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        Timer(label: "hearth_http_request_duration_seconds", dimensions: [("route", route)]).recordNanoseconds(nanoseconds)
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                "ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000)",
                "requestId": "\(context.id)", "client": "\(access.clientAddress(request, peer: context.clientIp) ?? "-")",
            ])
        return response
    }

    /// The metric's route: the operation of an Identity Toolkit call (`accounts:signUp`), else
    /// the matched route's pattern; never the raw path, which a client could vary without end.
    static func route(_ request: Request, _ context: Context) -> String {
        let path = request.uri.path
        if path.hasPrefix("/identitytoolkit.googleapis.com/v1/") || path.hasPrefix("/www.googleapis.com/identitytoolkit/v3/") {
            let last = path.split(separator: "/").last.map(String.init) ?? ""
            let operation = last.split(separator: ":").last.map(String.init) ?? last
            if IdentityToolkitAPI.operations.contains(operation) || IdentityToolkitAPI.legacyAliases[operation] != nil {
                return operation
            }
        }
        let pattern = context.endpointPath ?? ""
        return pattern.isEmpty ? "unmatched" : pattern
    }
}
