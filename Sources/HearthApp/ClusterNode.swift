import Foundation
import HTTPTypes
import HearthCluster
import HearthDomain
import HearthHTTP
import HearthScheduler
import HearthStore
import Hummingbird
import Logging
import ServiceLifecycle

/// A node's part in a cluster, put together: the state its elector and replicator share, the two
/// services, and the leader's end of the replication channel on the daemon's own listener.
struct ClusterNode {
    let configuration: ClusterConfiguration
    let state: ClusterState
    let elector: Elector
    let replicator: Replicator
    let source: ReplicationSource
    let snapshots: SnapshotSource
    let signingKeys: SigningKeyFiles

    /// In a cluster no write happens until this node is elected: `declaredProjects`' settings are
    /// recorded by whichever node leads, when it is elected (a single node does it at start).
    init(
        _ cluster: ClusterConfiguration, store: AccountStore, caughtUp: StartSignal, declaredProjects: [ProjectSettings.DeclaredProject],
        logger: Logger
    ) {
        store.writeAuthority.follow(nil)
        configuration = cluster
        state = ClusterState()
        let ready: @Sendable () async -> Bool = { await caughtUp.waitUnlessStopped() }
        elector = Elector(
            configuration: cluster, store: store, state: state, startsAfter: ready,
            onLeadership: {
                // A new term acknowledges once a follower holds its ledger: until then (or if it
                // times out), try again while this node leads.
                for attempt in 1... {
                    do {
                        return try await ProjectSeeding.seed(declaredProjects, into: store, logger: logger)
                    } catch StoreError.notReplicated where attempt < 5 {
                        try? await Task.sleep(for: .seconds(2))
                        continue
                    } catch StoreError.notLeader {
                        return
                    } catch {
                        return logger.error("recording the declared projects' settings failed", metadata: ["error": "\(error)"])
                    }
                }
            }, logger: logger)
        replicator = Replicator(configuration: cluster, store: store, state: state, startsAfter: ready, logger: logger)
        source = ReplicationSource(store: store, token: cluster.replicationToken)
        snapshots = SnapshotSource(store: store, token: cluster.replicationToken)
        signingKeys = SigningKeyFiles(store: store, token: cluster.replicationToken)
    }

    /// A rotated signing key's file this node lacks: a follower fetches it from its leader; a
    /// leader (elected before it had fetched it) from any other node that holds it
    /// (`SigningKeyFiles.fetch(_:fromAnyOf:)`), and says when none does (`SigningKeyRing.due`).
    var fetchSigningKey: @Sendable (String) async throws -> KeyFileAvailability {
        { [state, signingKeys, configuration] keyID in
            let snapshot = state.snapshot
            switch snapshot.role {
            case .follower:
                guard let url = snapshot.leader?.url else { return .sought }
                try await signingKeys.fetch(keyID, from: url)
                return .held
            case .leader:
                guard let members = try? await ClusterStatus.members(of: configuration) else { return .sought }
                return await signingKeys.fetch(keyID, fromAnyOf: members.filter { $0.node != configuration.node })
            }
        }
    }

    var services: [any Service] { [elector, replicator] }

    /// How this node, while it follows, asks its leader what only the leader can answer.
    func forwarding(token: String) -> LeaderForwarding {
        LeaderForwarding(
            leaderURL: { [state] in
                let snapshot = state.snapshot
                return snapshot.role == .follower ? snapshot.leader?.url : nil
            }, token: token,
            send: { url, request in
                let answer = try await LeaderClient.send(
                    to: url, method: request.method, target: request.target, headers: request.headers, body: request.body,
                    reason: request.reason)
                return LeaderForwarding.Answer(status: answer.status, headers: answer.headers, body: answer.body)
            })
    }

    /// `GET /hearth/v1/cluster/ledger?after=N&hash=H[&durable=D]`: what a follower asks its leader for;
    /// `GET /hearth/v1/cluster/ledger/hash?at=N`: how it finds the last record they share;
    /// `GET /hearth/v1/cluster/ledger/keys?streams=F1,F2`: the keys a tail it drops destroyed;
    /// `GET /hearth/v1/cluster/snapshot`: what a new node starts from (`hearth cluster join`).
    func addRoutes(to router: Router<HearthRequestContext>) {
        router.get("/hearth/v1/cluster/snapshot") { [snapshots] request, _ in
            await Self.snapshot(snapshots, authorization: request.headers[.authorization])
        }
        router.get("/hearth/v1/cluster/ledger") { [source] request, _ in
            let query = request.uri.queryParameters
            return Self.response(
                await source.answer(
                    ReplicationSource.Request(
                        after: query.get("after").flatMap { UInt64($0) }, hash: query.get("hash"),
                        // One that is not a number confirms nothing.
                        durable: query.get("durable").map { UInt64($0) ?? 0 },
                        node: request.headers[HTTPField.Name(ReplicationSource.nodeHeader)!],
                        authorization: request.headers[.authorization])),
                binary: true)
        }
        router.get("/hearth/v1/cluster/signing-key") { [signingKeys] request, _ in
            let answer = signingKeys.answer(keyID: request.uri.queryParameters.get("kid"), authorization: request.headers[.authorization])
            return Response(
                status: HTTPResponse.Status(code: answer.status),
                headers: [.contentType: answer.status == 200 ? "application/x-pem-file" : "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        router.get("/hearth/v1/cluster/ledger/hash") { [source] request, _ in
            Self.response(
                source.hash(
                    at: request.uri.queryParameters.get("at").flatMap { UInt64($0) }, authorization: request.headers[.authorization]),
                binary: false)
        }
        router.get("/hearth/v1/cluster/ledger/keys") { [source] request, _ in
            Self.response(
                source.keyEntries(streams: request.uri.queryParameters.get("streams"), authorization: request.headers[.authorization]),
                binary: true)
        }
    }

    /// The copy's files, each after its header, read from disk a mebibyte at a time as the
    /// client takes them; removed once sent, or once the client went away.
    private static func snapshot(_ snapshots: SnapshotSource, authorization: String?) async -> Response {
        let snapshot: SnapshotSource.Snapshot
        switch await snapshots.prepare(authorization: authorization) {
        case .refused(let status, let reason):
            return Response(
                status: HTTPResponse.Status(code: status), headers: [.contentType: "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: reason)))
        case .ready(let ready): snapshot = ready
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[HTTPField.Name(SnapshotSource.headHeader)!] = String(snapshot.head)
        headers[HTTPField.Name(SnapshotSource.bytesHeader)!] = String(snapshot.bytes)
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { snapshots.finished(snapshot) }
                for file in snapshot.files {
                    try await writer.write(ByteBuffer(bytes: SnapshotSource.header(name: file.name, size: file.bytes)))
                    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: snapshot.directory + "/" + file.name))
                    defer { try? handle.close() }
                    while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                        try await writer.write(ByteBuffer(bytes: chunk))
                    }
                }
                try await writer.finish(nil)
            })
    }

    private static func response(_ answer: ReplicationSource.Answer, binary: Bool) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = answer.status == 200 && binary ? "application/octet-stream" : "text/plain; charset=utf-8"
        if let head = answer.head { headers[HTTPField.Name(ReplicationSource.headHeader)!] = String(head) }
        if let term = answer.term { headers[HTTPField.Name(ReplicationSource.termHeader)!] = String(term) }
        if let key = answer.ledgerKey { headers[HTTPField.Name(ReplicationSource.ledgerKeyHeader)!] = key }
        let body = answer.status == 200 ? answer.body : Array((answer.refusal ?? "").utf8)
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
