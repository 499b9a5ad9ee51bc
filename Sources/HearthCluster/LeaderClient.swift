import AsyncHTTPClient
import CoreMetrics
import NIOCore
import NIOHTTP1

/// A follower's calls to its leader's API on behalf of a client (`LeaderForwarding` in the HTTP
/// adapter): the request as received, the answer as the leader gave it.
public enum LeaderClient {
    /// Forwarded requests and the leader's answers are API-sized; a sign-up can wait for a
    /// password hash and a synchronous follower.
    static let maxAnswer = 4 << 20
    static let timeout: TimeAmount = .seconds(30)
    /// Forwarded requests by `reason`: `write` (only the leader writes) or `miss` (a read that
    /// found nothing here, asked of the leader for read-your-writes).
    private static let forwarded = [
        "write": Counter(label: "hearth_cluster_forwarded_requests_total", dimensions: [("reason", "write")]),
        "miss": Counter(label: "hearth_cluster_forwarded_requests_total", dimensions: [("reason", "miss")]),
    ]

    public struct Answer: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
    }

    /// Sends `method target` with `headers` and `body` to the leader at `leaderURL`, counted under `reason`.
    public static func send(
        to leaderURL: String, method: String, target: String, headers: [(name: String, value: String)], body: [UInt8], reason: String
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: leaderURL + target)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await ClusterHTTP.client.execute(request, timeout: timeout)
        let answer = try await response.body.collect(upTo: maxAnswer)
        forwarded[reason]?.increment()
        return Answer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            body: Array(answer.readableBytesView))
    }
}
