import CoreMetrics
import HTTPTypes
import HearthWire
import Hummingbird
import Logging
import Synchronization

/// One line per request at `info` (the cluster's replication requests at `debug`): method, path (never the query: it may carry codes or
/// tokens), status, latency, request id and client address (its network by default:
/// `ClientAddressLogging`). The request id is also the
/// response's `X-Request-Id` and the `requestId` of every event the request records.
struct RequestLogMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let access: APIAccess
    private let metrics = RouteMetrics()
    static var requestIdHeader: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    init(access: APIAccess) { self.access = access }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[Self.requestIdHeader] = context.id
        let elapsed = start.duration(to: .now)
        let path = request.uri.path
        metrics.record(route: Self.route(path, context), status: response.status.code, elapsed: elapsed)
        // A follower's long polls of its leader would fill the log: they are debug lines.
        context.logger.log(
            level: path.hasPrefix("/hearth/v1/cluster/") ? .debug : .info, "request",
            metadata: [
                "method": "\(request.method)", "path": "\(path)", "status": "\(response.status.code)",
                "ms": "\(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000)",
                "requestId": "\(context.id)",
                "client": "\(access.logClientAddresses.render(access.clientAddress(request, peer: context.clientIp)))",
            ])
        return response
    }

    /// The metric's route: the operation of an Identity Toolkit call (`accounts:signUp`), else
    /// the matched route's pattern; never the raw path, which a client could vary without end.
    static func route(_ path: String, _ context: Context) -> String {
        if path.hasPrefix("/identitytoolkit.googleapis.com/v1/") || path.hasPrefix("/www.googleapis.com/identitytoolkit/v3/") {
            // The text after the last ':' of the last path component, or the whole component.
            let utf8 = path.utf8
            let slash = utf8.lastIndex(of: UInt8(ascii: "/")).map(utf8.index(after:)) ?? utf8.startIndex
            let colon = utf8[slash...].lastIndex(of: UInt8(ascii: ":")).map(utf8.index(after:)) ?? slash
            let operation = String(path[colon...])
            if IdentityToolkitAPI.operations.contains(operation) || IdentityToolkitAPI.legacyAliases[operation] != nil {
                return operation
            }
        }
        let pattern = context.endpointPath ?? ""
        return pattern.isEmpty ? "unmatched" : pattern
    }
}

/// The request counter and latency timer of each route and status, made once: creating a
/// swift-metrics handle is a lookup in the registry (label sanitizing, its lock) that the
/// request path need not repeat. Routes are bounded (`RequestLogMiddleware.route`), statuses too.
final class RouteMetrics: Sendable {
    private struct Handles {
        var counters: [Key: Counter] = [:]
        var timers: [String: Timer] = [:]
    }

    private struct Key: Hashable {
        var route: String
        var status: Int
    }

    private let handles = Mutex(Handles())

    func record(route: String, status: Int, elapsed: Duration) {
        let (counter, timer) = handles.withLock { handles in
            let key = Key(route: route, status: status)
            let counter =
                handles.counters[key]
                ?? {
                    let made = Counter(label: "hearth_http_requests_total", dimensions: [("route", route), ("status", String(status))])
                    handles.counters[key] = made
                    return made
                }()
            let timer =
                handles.timers[route]
                ?? {
                    let made = Timer(label: "hearth_http_request_duration_seconds", dimensions: [("route", route)])
                    handles.timers[route] = made
                    return made
                }()
            return (counter, timer)
        }
        counter.increment()
        let (seconds, attoseconds) = elapsed.components
        timer.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
