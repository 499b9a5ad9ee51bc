import AsyncHTTPClient
import Foundation
import HearthWire
import NIOCore
import NIOHTTP1
import Synchronization

/// etcd's v3 API through its JSON gateway (`POST /v3/<service>/<method>`), over async-http-client,
/// which the daemon already carries: only the calls an election needs. Keys and values travel
/// base64-encoded and 64-bit integers as strings. Every call has a deadline; an endpoint that
/// cannot be reached is skipped for the next one in the list.
public struct EtcdClient: Sendable {
    public let endpoints: [String]
    /// The deadline of one call.
    public var timeout: Duration
    private let preferred = Preferred()

    static let leaseNotFound = "etcdserver: requested lease not found"

    /// Answers are small (a key or two); anything larger is not etcd's.
    static let maxAnswer = 1 << 20

    public init(endpoints: [String], timeout: Duration = .seconds(2)) {
        precondition(!endpoints.isEmpty, "at least one etcd endpoint")
        self.endpoints = endpoints
        self.timeout = timeout
    }

    /// A lease and its TTL in whole seconds, as etcd granted it (never less than asked).
    public struct Lease: Sendable, Equatable {
        public var id: Int64
        public var ttl: Int64
    }

    /// One stored key: its value, the revisions that created and last changed it, and its lease.
    public struct KeyValue: Sendable, Equatable {
        public var key: String
        public var value: [UInt8]
        public var createRevision: Int64
        public var modRevision: Int64
        public var lease: Int64
    }

    public func grant(ttlSeconds: Int64) async throws(EtcdError) -> Lease {
        let answer = try await call("lease/grant", ["TTL": .string(String(ttlSeconds))])
        guard let id = Self.int(answer["ID"]), let ttl = Self.int(answer["TTL"]), ttl > 0 else {
            throw .refused(answer["error"]?.stringValue ?? "no lease granted")
        }
        return Lease(id: id, ttl: ttl)
    }

    /// Renews `lease` once; returns the TTL it was reset to, or `nil` when etcd no longer holds
    /// it (expired or revoked).
    public func keepAlive(_ lease: Int64) async throws(EtcdError) -> Int64? {
        let answer = try await call("lease/keepalive", ["ID": .string(String(lease))], allowing: [Self.leaseNotFound])
        guard let ttl = Self.int(answer["result"]?["TTL"]), ttl > 0 else { return nil }
        return ttl
    }

    public func revoke(_ lease: Int64) async throws(EtcdError) {
        _ = try await call("lease/revoke", ["ID": .string(String(lease))], allowing: [Self.leaseNotFound])
    }

    public func get(_ key: String) async throws(EtcdError) -> KeyValue? {
        try await range(key, prefix: false).first
    }

    /// Every key that starts with `prefix`.
    public func list(prefix: String) async throws(EtcdError) -> [KeyValue] {
        try await range(prefix, prefix: true)
    }

    public func put(_ key: String, _ value: [UInt8], lease: Int64? = nil) async throws(EtcdError) {
        var body: [String: JSONValue] = ["key": Self.base64(key), "value": .string(Data(value).base64EncodedString())]
        if let lease { body["lease"] = .string(String(lease)) }
        _ = try await call("kv/put", body)
    }

    /// Deletes `key` only while it is still the one created at `createRevision` (a leader's
    /// clean step-down must never delete its successor's key).
    public func delete(_ key: String, ifCreatedAt createRevision: Int64) async throws(EtcdError) {
        _ = try await call(
            "kv/txn",
            [
                "compare": [
                    [
                        "key": Self.base64(key), "target": "CREATE", "result": "EQUAL",
                        "create_revision": .string(String(createRevision)),
                    ]
                ],
                "success": [["request_delete_range": ["key": Self.base64(key)]]],
            ])
    }

    /// Puts `key` only while `guardKey` is still the one created at `createRevision` (a leader
    /// writes the cluster's state only within its own term); returns whether it did.
    public func put(_ key: String, _ value: [UInt8], whileKey guardKey: String, createdAt createRevision: Int64) async throws(EtcdError)
        -> Bool
    {
        let answer = try await call(
            "kv/txn",
            [
                "compare": [
                    [
                        "key": Self.base64(guardKey), "target": "CREATE", "result": "EQUAL",
                        "create_revision": .string(String(createRevision)),
                    ]
                ],
                "success": [["request_put": ["key": Self.base64(key), "value": .string(Data(value).base64EncodedString())]]],
            ])
        return answer["succeeded"] == .bool(true)
    }

    /// What a create-only put found: the key is now ours, created at `revision`, or it was
    /// already there, as it stands.
    public enum Creation: Sendable, Equatable {
        case created(revision: Int64)
        case exists(KeyValue?)
    }

    /// Puts `key` under `lease` only if it does not exist: the compare-and-set of an election.
    public func create(_ key: String, _ value: [UInt8], lease: Int64) async throws(EtcdError) -> Creation {
        let answer = try await call(
            "kv/txn",
            [
                "compare": [["key": Self.base64(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"]],
                "success": [
                    [
                        "request_put": [
                            "key": Self.base64(key), "value": .string(Data(value).base64EncodedString()),
                            "lease": .string(String(lease)),
                        ]
                    ]
                ],
                "failure": [["request_range": ["key": Self.base64(key)]]],
            ])
        if answer["succeeded"] == .bool(true) {
            guard let revision = Self.int(answer["header"]?["revision"]) else { throw .malformed("txn without a revision") }
            return .created(revision: revision)
        }
        let found = answer["responses"]?.arrayValue?.first?["response_range"]?["kvs"]?.arrayValue?.first
        return .exists(try found.map { value throws(EtcdError) in try Self.keyValue(value) })
    }

    private func range(_ key: String, prefix: Bool) async throws(EtcdError) -> [KeyValue] {
        var body: [String: JSONValue] = ["key": Self.base64(key)]
        if prefix { body["range_end"] = .string(Data(Self.prefixEnd(Array(key.utf8))).base64EncodedString()) }
        let answer = try await call("kv/range", body)
        var values: [KeyValue] = []
        for value in answer["kvs"]?.arrayValue ?? [] { values.append(try Self.keyValue(value)) }
        return values
    }

    // MARK: - The gateway

    /// POSTs `body` to each endpoint in turn, starting with the one that answered last, until
    /// one answers; an error etcd states (other than those `allowing` names) is `.refused`.
    private func call(_ path: String, _ body: [String: JSONValue], allowing allowed: Set<String> = []) async throws(EtcdError)
        -> JSONValue
    {
        let start = preferred.index
        var failure = EtcdError.unreachable("no endpoint")
        for offset in 0..<endpoints.count {
            let index = (start + offset) % endpoints.count
            do {
                let (status, answer) = try await post(endpoints[index] + "/v3/" + path, JSONValue.object(body).encoded())
                preferred.index = index
                if status == 200 { return answer }
                let message = answer["error"]?.stringValue ?? answer["message"]?.stringValue ?? "HTTP \(status)"
                if allowed.contains(message) { return answer }
                throw EtcdError.refused(message)
            } catch let error as EtcdError {
                if case .refused = error { throw error }
                failure = error
            } catch {
                failure = .unreachable("\(endpoints[index]): \(error)")
            }
        }
        throw failure
    }

    private func post(_ url: String, _ body: [UInt8]) async throws -> (Int, JSONValue) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await ClusterHTTP.client.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
        let bytes = try await response.body.collect(upTo: Self.maxAnswer)
        guard let answer = JSONValue.parse(bytes.readableBytesView) else {
            throw EtcdError.malformed("\(url) answered HTTP \(response.status.code) without JSON")
        }
        return (Int(response.status.code), answer)
    }

    /// The endpoint that answered last, tried first next time.
    private final class Preferred: Sendable {
        private let value = Atomic<Int>(0)
        var index: Int {
            get { value.load(ordering: .relaxed) }
            set { value.store(newValue, ordering: .relaxed) }
        }
    }

    // MARK: - Encoding

    private static func base64(_ key: String) -> JSONValue { .string(Data(key.utf8).base64EncodedString()) }

    /// The smallest key greater than every key starting with `prefix` (etcd's range end).
    static func prefixEnd(_ prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return [0]
    }

    static func int(_ value: JSONValue?) -> Int64? {
        switch value {
        case .string(let text)?: Int64(text)
        case .int(let number)?: number
        default: nil
        }
    }

    private static func keyValue(_ value: JSONValue) throws(EtcdError) -> KeyValue {
        guard let key = value["key"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else { throw .malformed("a key without a name") }
        let stored = value["value"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Data()
        return KeyValue(
            key: String(decoding: key, as: UTF8.self), value: [UInt8](stored), createRevision: int(value["create_revision"]) ?? 0,
            modRevision: int(value["mod_revision"]) ?? 0, lease: int(value["lease"]) ?? 0)
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

public enum EtcdError: Error, Equatable, CustomStringConvertible {
    /// No endpoint answered in time.
    case unreachable(String)
    /// etcd answered with an error.
    case refused(String)
    /// An answer that is not what the API returns.
    case malformed(String)

    public var description: String {
        switch self {
        case .unreachable(let detail): "etcd unreachable: \(detail)"
        case .refused(let message): "etcd refused: \(message)"
        case .malformed(let detail): "etcd answered unexpectedly: \(detail)"
        }
    }
}
