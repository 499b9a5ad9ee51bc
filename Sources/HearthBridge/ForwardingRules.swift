import Foundation
import HearthWire
import NIOCore
import NIOHTTP1

/// What the bridge forwards and how a request and a response are rewritten on the way: pure
/// functions of the heads, so every rule is tested without a socket.
struct ForwardingRules: Sendable {
    let upstream: Upstream
    /// `127.0.0.1:PORT`, the one `Host` requests may carry.
    let listenAuthority: String
    /// The admin token `Bearer owner` becomes, on a connection allowed to use it.
    let adminToken: String?

    init(upstream: Upstream, listenHost: String, listenPort: Int, adminToken: String? = nil) {
        self.upstream = upstream
        self.adminToken = adminToken
        let host = listenHost.hasPrefix("[") ? listenHost : (listenHost.contains(":") ? "[\(listenHost)]" : listenHost)
        listenAuthority = "\(host):\(listenPort)"
    }

    enum Refusal: Error, Equatable {
        /// Another `Host` than the bridge's own loopback address: a page that rebound a DNS
        /// name to 127.0.0.1, or a request meant for somewhere else.
        case foreignHost(String)
        /// An absolute URL or CONNECT: the bridge is not a proxy to anywhere but its upstream.
        case notOriginForm(String)
        case method(String)
    }

    /// The request as the upstream gets it, or why it is refused.
    func upstreamHead(for head: HTTPRequestHead) -> Result<HTTPRequestHead, Refusal> {
        let hosts = head.headers["host"]
        guard hosts.count == 1, let host = hosts.first, host.lowercased() == listenAuthority else {
            return .failure(.foreignHost(hosts.joined(separator: ",")))
        }
        guard head.method != .CONNECT, head.method != .TRACE else { return .failure(.method(head.method.rawValue)) }
        guard head.uri.hasPrefix("/"), !head.uri.hasPrefix("//") else { return .failure(.notOriginForm(head.uri)) }
        // Dot segments would walk out of the upstream's path prefix once the upstream resolves them.
        guard !Self.hasDotSegment(head.uri) else { return .failure(.notOriginForm(head.uri)) }
        var headers = Self.endToEnd(head.headers)
        headers.remove(name: "host")
        headers.remove(name: "expect")
        if headers.contains(name: "transfer-encoding") {
            // The parser accepted the body as chunked (chunked last) and hands it over decoded:
            // it goes upstream re-chunked under exactly this header, never under a spelling the
            // encoder would not chunk, so the upstream frames it as the bridge does.
            headers.remove(name: "transfer-encoding")
            headers.remove(name: "content-length")
            headers.add(name: "transfer-encoding", value: "chunked")
        }
        headers.replaceOrAdd(name: "host", value: upstream.authority)
        if let adminToken, headers["authorization"] == [EmulatorAdmin.emulatorCredential] {
            headers.replaceOrAdd(name: "authorization", value: "Bearer \(adminToken)")
        }
        // The upstream connection is kept alive whatever the client asked of its own.
        var forwarded = HTTPRequestHead(version: .http1_1, method: head.method, uri: upstream.pathPrefix + head.uri)
        forwarded.headers = headers
        return .success(forwarded)
    }

    /// `.` or `..` as a path segment, raw or percent-encoded (`%2e`), before the query. On
    /// the bytes: this runs for every request.
    static func hasDotSegment(_ uri: String) -> Bool {
        let path = Array(uri.utf8.prefix { $0 != UInt8(ascii: "?") })
        return path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains { segment in
            var rest = segment
            var dots = 0
            while let first = rest.first, dots < 3 {
                if first == UInt8(ascii: ".") {
                    rest = rest.dropFirst()
                } else if first == UInt8(ascii: "%"), rest.dropFirst().first == UInt8(ascii: "2"),
                    let third = rest.dropFirst(2).first, third | 0x20 == UInt8(ascii: "e")
                {
                    rest = rest.dropFirst(3)
                } else {
                    return false
                }
                dots += 1
            }
            return rest.isEmpty && (dots == 1 || dots == 2)
        }
    }

    /// The response as the client gets it: the upstream connection's own headers removed.
    func clientHead(for head: HTTPResponseHead, closing: Bool) -> HTTPResponseHead {
        var headers = Self.endToEnd(head.headers)
        if closing { headers.replaceOrAdd(name: "connection", value: "close") }
        return HTTPResponseHead(version: .http1_1, status: head.status, headers: headers)
    }

    /// RFC 9110 §7.6.1: hop-by-hop fields, and those `Connection` names, stay on their hop.
    /// `Transfer-Encoding` and `Content-Length` stay: they frame the body, which is streamed.
    static func endToEnd(_ headers: HTTPHeaders) -> HTTPHeaders {
        // Removed in place, and only what is there: most heads carry one of them, if any.
        var kept = headers
        for value in headers["connection"] {
            for token in value.split(separator: ",") {
                // Trimmed without Foundation: this runs for every request and response.
                let name = String(token.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
                if !framing.contains(name.lowercased()) { kept.remove(name: name) }
            }
        }
        for name in hopByHop where kept.contains(name: name) { kept.remove(name: name) }
        return kept
    }

    private static let hopByHop = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "upgrade",
    ]
    private static let framing: Set<String> = ["transfer-encoding", "content-length", "host"]
}

/// The bridge's own answers, in the Firebase error envelope the SDKs parse.
struct BridgeReply: Sendable, Equatable {
    let status: HTTPResponseStatus
    let message: String

    static func refused(_ refusal: ForwardingRules.Refusal, listenAuthority: String) -> BridgeReply {
        switch refusal {
        case .foreignHost(let host):
            BridgeReply(
                status: .forbidden,
                message:
                    "PERMISSION_DENIED : the bridge answers only requests for \(listenAuthority), not Host \(host.isEmpty ? "(none)" : host)"
            )
        case .notOriginForm:
            BridgeReply(
                status: .badRequest, message: "INVALID_ARGUMENT : the bridge forwards paths to its upstream only, never absolute URLs")
        case .method(let method):
            BridgeReply(status: .methodNotAllowed, message: "INVALID_ARGUMENT : \(method) is not forwarded")
        }
    }

    static func unavailable(_ failure: UpstreamFailure) -> BridgeReply {
        BridgeReply(status: failure == .timedOut ? .gatewayTimeout : .serviceUnavailable, message: failure.message)
    }

    var statusName: String {
        switch status {
        case .forbidden: "PERMISSION_DENIED"
        case .badRequest, .methodNotAllowed: "INVALID_ARGUMENT"
        case .gatewayTimeout: "DEADLINE_EXCEEDED"
        default: "UNAVAILABLE"
        }
    }

    /// `{"error":{"code":503,"message":"…","errors":[…],"status":"UNAVAILABLE"}}`.
    var body: [UInt8] {
        let error: JSONValue = [
            "code": .int(Int64(status.code)), "message": .string(message),
            "errors": [["message": .string(message), "domain": "global", "reason": status == .forbidden ? "forbidden" : "backendError"]],
            "status": .string(statusName),
        ]
        return JSONValue.object(["error": error]).encoded()
    }
}

/// Why a request could not reach the upstream; each is a 503 (a 504 for silence) with a
/// message that says which, so an app's log tells a dead server from a wrong certificate.
enum UpstreamFailure: Error, Equatable, Sendable {
    case unreachable(String)
    case untrusted(String)
    case pinMismatch
    case busy
    case timedOut
    case closed

    var message: String {
        switch self {
        case .unreachable(let reason): "UNAVAILABLE : the bridge could not reach its upstream (\(reason))"
        case .untrusted(let reason): "UNAVAILABLE : the upstream's TLS certificate was refused (\(reason))"
        case .pinMismatch: "UNAVAILABLE : the upstream's certificate key matches no configured pin"
        case .busy: "UNAVAILABLE : every connection to the upstream stayed busy; try again"
        case .timedOut: "DEADLINE_EXCEEDED : the upstream did not answer in time"
        case .closed: "UNAVAILABLE : the upstream closed the connection before answering"
        }
    }
}
