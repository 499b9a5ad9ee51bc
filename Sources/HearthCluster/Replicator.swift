import AsyncHTTPClient
import CoreMetrics
import HearthDomain
import HearthStore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A follower's end of the replication channel: while this node follows a known leader, asks it
/// for the records after its own head (`ReplicationSource`), and applies each batch, checked and
/// folded in one transaction (`StoreReplication.apply`); a batch's commit is durable before the
/// next request, which says so to the leader. A failed batch is retried after a pause, and its
/// reason kept for `/readyz` and logged once.
public struct Replicator: Service {
    let configuration: ClusterConfiguration
    let store: AccountStore
    let state: ClusterState
    let ready: @Sendable () async -> Bool
    let logger: Logger

    private static let applied = Counter(label: "hearth_cluster_replicated_events_total")
    /// A long poll waits up to 5 s at the leader; this bounds the whole request.
    static let requestTimeout: TimeAmount = .seconds(15)
    static let maxBatchBytes = 64 << 20

    public init(
        configuration: ClusterConfiguration, store: AccountStore, state: ClusterState,
        startsAfter ready: @escaping @Sendable () async -> Bool = { true }, logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.state = state
        self.ready = ready
        self.logger = logger
    }

    public func run() async throws {
        guard await ready() else { return }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let snapshot = state.snapshot
                guard snapshot.role == .follower, let leader = snapshot.leader, leader.node != configuration.node else {
                    try? await Task.sleep(for: .milliseconds(200))
                    continue
                }
                do {
                    try await replicate(from: leader.url)
                    if snapshot.replicationError != nil {
                        state.update { $0.replicationError = nil }
                        logger.notice("replicating from the leader again", metadata: ["leader": "\(leader.node)"])
                    }
                } catch  where Task.isCancelled {
                    // Stopping: the request in flight was cancelled, whatever error it says.
                    break
                } catch {
                    let reason = "\(error)"
                    if snapshot.replicationError != reason {
                        logger.error("replication from the leader failed", metadata: ["leader": "\(leader.node)", "error": "\(reason)"])
                    }
                    state.update { $0.replicationError = reason }
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
        }
    }

    /// One request and, if it brought records, one batch applied.
    private func replicate(from leaderURL: String) async throws {
        let head = try store.ledgerHead().sequence
        var request = HTTPClientRequest(url: "\(leaderURL)/hearth/v1/cluster/ledger?after=\(head)")
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.replicationToken)")
        request.headers.add(name: "Hearth-Node", value: configuration.node)
        let response = try await ClusterHTTP.client.execute(request, timeout: Self.requestTimeout)
        let body = try await response.body.collect(upTo: Self.maxBatchBytes)
        let leaderHead = response.headers.first(name: ReplicationSource.headHeader).flatMap(UInt64.init)
        if let theirs = response.headers.first(name: ReplicationSource.ledgerKeyHeader), let ours = store.replication.ledgerKeyFingerprint,
            theirs != ours
        {
            throw LedgerKeyMismatch(ours: ours, leaders: theirs)
        }
        switch response.status.code {
        case 200:
            let batch = try ReplicationBatch(received: Array(body.readableBytesView))
            let head = try await store.replication.apply(batch)
            let lag = max(0, store.clock.now() - head.recordedAt)
            Self.applied.increment(by: batch.records)
            state.update {
                $0.leaderHead = leaderHead
                $0.replicated += UInt64(batch.records)
                $0.lagMilliseconds = lag
            }
        case 204:
            state.update {
                $0.leaderHead = leaderHead
                $0.lagMilliseconds = 0
            }
        default:
            throw ReplicationRefused(
                status: Int(response.status.code), body: String(decoding: body.readableBytesView.prefix(300), as: UTF8.self))
        }
    }
}

/// A follower whose ledger key is not its leader's could open none of the personal data it
/// receives: it applies nothing, and says what to do.
struct LedgerKeyMismatch: Error, CustomStringConvertible {
    var ours: String
    var leaders: String
    var description: String {
        "this node's ledger key (\(ours)) is not the leader's (\(leaders)): give it copies of the leader's key files, or restore the leader's backup (docs/cluster.md)"
    }
}

struct ReplicationRefused: Error, CustomStringConvertible {
    var status: Int
    var body: String
    var description: String { "the leader answered \(status)\(body.isEmpty ? "" : ": \(body)")" }
}
