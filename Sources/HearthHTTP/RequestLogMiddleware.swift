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
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                "ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000)",
                "requestId": "\(context.id)", "client": "\(access.clientAddress(request, peer: context.clientIp) ?? "-")",
            ])
        return response
    }
}
