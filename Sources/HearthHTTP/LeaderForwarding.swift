import HTTPTypes
import HearthAuth
import Hummingbird
import NIOCore

/// In a cluster, what a follower cannot answer itself it asks its leader, and answers with the
/// leader's result, so an SDK may be pointed at any node or a plain load balancer: a write
/// (the store refuses it here: `FirebaseError.notLeader`), and a read that finds nothing
/// (an account, code or token the leader wrote and this node has not applied yet), so a client
/// that was answered a write is never then told "not found" for it (read-your-writes).
///
/// The request goes as it came (method, path, headers, body), with the client's address and
/// the cluster's credential (`Hearth-Forwarded-For`, `Hearth-Forwarding-Token`), which the
/// leader alone believes (`APIAccess.clientAddress`). A forwarded request is never forwarded
/// again; a leader that cannot be reached leaves the local answer standing.
public struct LeaderForwarding: Sendable {
    /// A request as it goes to the leader.
    public struct Outgoing: Sendable {
        public var method: String
        /// Path and query, as received.
        public var target: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        /// Why it goes to the leader: a `write` this node may not make, or a read that found
        /// nothing here (a `miss`).
        public var reason: String
    }

    /// The leader's answer.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// The leader's URL while this node follows a known one; `nil` while it leads, or knows none.
    public var leaderURL: @Sendable () -> String?
    /// Sends `request` to the leader at `url`; throws when it cannot be reached.
    public var send: @Sendable (_ url: String, _ request: Outgoing) async throws -> Answer
    /// The cluster's replication credential, which vouches for the client's address.
    public var token: String

    public init(
        leaderURL: @escaping @Sendable () -> String?, token: String,
        send: @escaping @Sendable (_ url: String, _ request: Outgoing) async throws -> Answer
    ) {
        self.leaderURL = leaderURL
        self.token = token
        self.send = send
    }

    static let forwardedFor = HTTPField.Name("Hearth-Forwarded-For")!
    static let forwardingToken = HTTPField.Name("Hearth-Forwarding-Token")!

    /// The largest body a follower holds to forward: every API body is smaller (1 MiB).
    static let maxBody = 1 << 20

    /// What a follower answers from its own projections but the leader may know better (an
    /// ID token's signature is checked alike everywhere: a bad one is not asked about twice).
    static let notFoundHere = [
        "USER_NOT_FOUND", "EMAIL_NOT_FOUND", "INVALID_REFRESH_TOKEN", "TOKEN_EXPIRED", "INVALID_OOB_CODE", "INVALID_LOGIN_CREDENTIALS",
        "INVALID_PASSWORD", "CONFIGURATION_NOT_FOUND", "PROJECT_NOT_FOUND", "MFA_ENROLLMENT_NOT_FOUND",
    ]

    static func isForwardable(_ error: FirebaseError) -> Bool {
        error == .notLeader || notFoundHere.contains { error.message.hasPrefix($0) }
    }

    /// Headers that belong to one connection, not to the request or the answer.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "content-length", "host", "te", "trailer", "upgrade",
        "proxy-connection", forwardedFor.canonicalName, forwardingToken.canonicalName,
    ]
}

/// `LeaderForwarding` as a middleware, inside the error envelope (it sees the errors handlers
/// throw): on a follower, holds the request's body, answers locally, and forwards what the
/// leader must answer.
struct LeaderForwardingMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let forwarding: LeaderForwarding
    let access: APIAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let leader = forwarding.leaderURL(), request.headers[LeaderForwarding.forwardingToken] == nil,
            !request.uri.path.hasPrefix("/hearth/v1/cluster/")
        else { return try await next(request, context) }
        let body = try await request.body.collect(upTo: LeaderForwarding.maxBody)
        var local = request
        local.body = RequestBody(buffer: body)
        do {
            return try await next(local, context)
        } catch let error as FirebaseError where LeaderForwarding.isForwardable(error) {
            let reason = error == .notLeader ? "write" : "miss"
            guard let answer = try? await forward(request, body: body, reason: reason, context: context, to: leader) else { throw error }
            return answer
        }
    }

    private func forward(_ request: Request, body: ByteBuffer, reason: String, context: Context, to leader: String) async throws
        -> Response
    {
        var headers: [(name: String, value: String)] = []
        for field in request.headers where !LeaderForwarding.hopByHop.contains(field.name.canonicalName) {
            headers.append((field.name.rawName, field.value))
        }
        if let client = access.clientAddress(request, peer: context.clientIp) {
            headers.append((LeaderForwarding.forwardedFor.rawName, client))
        }
        headers.append((LeaderForwarding.forwardingToken.rawName, forwarding.token))
        let outgoing = LeaderForwarding.Outgoing(
            method: request.method.rawValue, target: request.uri.description, headers: headers, body: Array(body.readableBytesView),
            reason: reason)
        let answer = try await forwarding.send(leader, outgoing)
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            // This node's CORS middleware answers the origin itself (the same projects' settings).
            guard let field = HTTPField.Name(name), !LeaderForwarding.hopByHop.contains(field.canonicalName),
                !field.canonicalName.hasPrefix("access-control-"), field != .vary
            else { continue }
            fields.append(HTTPField(name: field, value: value))
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
