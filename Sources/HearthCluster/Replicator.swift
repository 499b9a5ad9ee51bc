import AsyncHTTPClient
import CoreMetrics
import HearthDomain
import HearthStore
import HearthWire
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A follower's end of the replication channel: while this node follows a known leader, asks it
/// for the records after its own head (`ReplicationSource`), and appends each batch, checked, in
/// one transaction (`StoreReplication.apply`); a request says how far the follower's ledger is
/// durable, which lets a synchronous leader acknowledge. A failed batch is retried after a
/// pause, and its reason kept for `/readyz` and logged once.
///
/// A follower whose head the leader does not hold (a former leader's unacknowledged tail, or
/// one it received from it) finds the last record both hold, drops the rest, writes down what
/// it dropped (`dropped-tail-<time>.json` in its data directory, and the log), folds its
/// projections again, and follows.
public struct Replicator: Service {
    let configuration: ClusterConfiguration
    let store: AccountStore
    let state: ClusterState
    let ready: @Sendable () async -> Bool
    let logger: Logger

    private static let applied = Counter(label: "hearth_cluster_replicated_events_total")
    private static let droppedRecords = Counter(label: "hearth_cluster_dropped_tail_events_total")
    /// A long poll waits a second at the leader; this bounds the whole request.
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

    /// Requests, and the batches they bring applied, until the leader has sent its whole ledger.
    /// A batch short of the leader's head has the next one asked for while it is appended (the
    /// request names the batch's last record as this ledger's end, and `durable` what is on disk
    /// already): catching up, the leader's reads and the network overlap the appends. A batch
    /// that reaches the leader's head is appended before the next request, which then confirms
    /// it at once: a synchronous leader waits for that.
    private func replicate(from leaderURL: String) async throws {
        guard var answer = try await request(leaderURL, after: try store.ledgerHead()) else { return }
        while true {
            // A node that still answers for a term older than the one etcd names has been
            // replaced: what it sends now, no one acknowledged.
            if let term = answer.term, let current = state.snapshot.term, term < current {
                throw ReplicationRefused(status: answer.status, body: "an answer for term \(term), older than term \(current)")
            }
            if let theirs = answer.ledgerKey, let ours = store.replication.ledgerKeyFingerprint, theirs != ours {
                throw LedgerKeyMismatch(ours: ours, leaders: theirs)
            }
            switch answer.status {
            case 200:
                let batch = try ReplicationBatch(received: Array(answer.body.readableBytesView))
                let ahead = batch.last.flatMap { last in (answer.leaderHead ?? 0) > last.sequence ? last : nil }
                let durable = try store.ledgerHead().sequence
                async let following = request(leaderURL, after: ahead, durable: durable)
                let lag = try await store.replication.apply(batch).lag
                Self.applied.increment(by: batch.records)
                state.update { [leaderHead = answer.leaderHead] in
                    $0.leaderHead = leaderHead
                    $0.replicated += UInt64(batch.records)
                    $0.lagMilliseconds = lag
                }
                guard let next = try await following else { return }
                answer = next
            case 204:
                state.update { [leaderHead = answer.leaderHead] in
                    $0.leaderHead = leaderHead
                    $0.lagMilliseconds = 0
                }
                return
            case 409 where answer.body.readableBytesView.starts(with: Array("diverged".utf8)):
                try await dropDivergedTail(leaderURL: leaderURL, leaderHead: answer.leaderHead ?? 0, ours: try store.ledgerHead().sequence)
                return
            default:
                throw ReplicationRefused(
                    status: answer.status, body: String(decoding: answer.body.readableBytesView.prefix(300), as: UTF8.self))
            }
        }
    }

    /// What the leader answered a request for records.
    private struct Answer: Sendable {
        var status: Int
        var body: ByteBuffer
        var leaderHead: UInt64?
        var term: Int64?
        var ledgerKey: String?
    }

    /// Asks for the records after `end` (none asked for without one).
    private func request(_ leaderURL: String, after end: LedgerHead?, durable: UInt64? = nil) async throws -> Answer? {
        guard let end else { return nil }
        var url = "\(leaderURL)/hearth/v1/cluster/ledger?after=\(end.sequence)&hash=\(end.hash)"
        if let durable { url += "&durable=\(durable)" }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.replicationToken)")
        request.headers.add(name: ReplicationSource.nodeHeader, value: configuration.node)
        let response = try await ClusterHTTP.client.execute(request, timeout: Self.requestTimeout)
        let body = try await response.body.collect(upTo: Self.maxBatchBytes)
        return Answer(
            status: Int(response.status.code), body: body,
            leaderHead: response.headers.first(name: ReplicationSource.headHeader).flatMap(UInt64.init),
            term: response.headers.first(name: ReplicationSource.termHeader).flatMap(Int64.init),
            ledgerKey: response.headers.first(name: ReplicationSource.ledgerKeyHeader))
    }

    /// Finds the last record this ledger shares with the leader's (a binary search on their
    /// hashes: two chains that agree at a record agree before it) and drops what follows it.
    private func dropDivergedTail(leaderURL: String, leaderHead: UInt64, ours: UInt64) async throws {
        var shared: UInt64 = 0
        var above = min(ours, leaderHead)
        while shared < above {
            let probe = shared + (above - shared + 1) / 2
            if try await leaderHash(at: probe, leaderURL: leaderURL) == store.replication.hash(at: probe) {
                shared = probe
            } else {
                above = probe - 1
            }
        }
        let leader = state.snapshot.leader?.node ?? leaderURL
        // Nothing in common is no tail: another history (a node restored from another backup,
        // or a leader elected empty), which this node never drops on its own.
        guard shared > 0 else { throw UnrelatedLedger(leader: leader) }
        logger.warning(
            "this node's ledger goes past what it shares with the leader's: dropping the unacknowledged tail",
            metadata: ["leader": "\(leader)", "keptThrough": "\(shared)", "head": "\(ours)"])
        state.update { $0.replicationError = "dropping an unacknowledged tail after record \(shared), and folding the projections again" }
        // Accounts the tail deleted or purged: their keys are destroyed here, and come back from the leader.
        let forgotten = try store.replication.keysForgotten(after: shared)
        let restoring = forgotten.isEmpty ? nil : try await leaderKeyEntries(of: forgotten, leaderURL: leaderURL)
        let dropped = try await store.replication.dropTail(after: shared, restoring: restoring)
        if let first = dropped.first, let last = dropped.last {
            let at = store.clock.now()
            let path = store.directory.path + "/dropped-tail-\(at).json"
            try DurableFiles.writeAtomically(
                Self.report(dropped, keptThrough: shared, keysRestored: forgotten.count, leader: leader, at: at), to: path)
            logger.warning(
                "dropped an unacknowledged tail",
                metadata: [
                    "records": "\(dropped.count)", "first": "\(first.sequence) \(first.hash)", "last": "\(last.sequence) \(last.hash)",
                    "keysRestored": "\(forgotten.count)", "report": "\(path)",
                ])
            Self.droppedRecords.increment(by: dropped.count)
        }
        try await store.replication.folded()
        state.update {
            $0.replicationError = nil
            $0.droppedTails += dropped.isEmpty ? 0 : 1
        }
    }

    /// The leader's key entries of the streams beginning at `firsts`, a request per
    /// `ReplicationSource.maxKeyStreams` of them, as one batch of key entries.
    private func leaderKeyEntries(of firsts: [UInt64], leaderURL: String) async throws -> ReplicationBatch {
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: firsts.count, by: ReplicationSource.maxKeyStreams) {
            let streams = firsts[start..<min(start + ReplicationSource.maxKeyStreams, firsts.count)].map(String.init)
            var request = HTTPClientRequest(url: "\(leaderURL)/hearth/v1/cluster/ledger/keys?streams=\(streams.joined(separator: ","))")
            request.headers.add(name: "Authorization", value: "Bearer \(configuration.replicationToken)")
            let response = try await ClusterHTTP.client.execute(request, timeout: Self.requestTimeout)
            let body = try await response.body.collect(upTo: Self.maxBatchBytes)
            guard response.status.code == 200 else {
                throw ReplicationRefused(
                    status: Int(response.status.code), body: String(decoding: body.readableBytesView.prefix(300), as: UTF8.self))
            }
            bytes.append(contentsOf: body.readableBytesView)
        }
        return try ReplicationBatch(received: bytes)
    }

    private func leaderHash(at sequence: UInt64, leaderURL: String) async throws -> String? {
        var request = HTTPClientRequest(url: "\(leaderURL)/hearth/v1/cluster/ledger/hash?at=\(sequence)")
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.replicationToken)")
        let response = try await ClusterHTTP.client.execute(request, timeout: .seconds(5))
        let body = try await response.body.collect(upTo: 1 << 10)
        switch response.status.code {
        case 200: return String(decoding: body.readableBytesView, as: UTF8.self)
        case 404: return nil
        default:
            throw ReplicationRefused(
                status: Int(response.status.code), body: String(decoding: body.readableBytesView.prefix(300), as: UTF8.self))
        }
    }

    /// What a dropped tail leaves in the data directory: the leader, the last record kept, how
    /// many accounts' keys the tail had destroyed and the leader gave back, and each dropped
    /// record's sequence, hash and time.
    static func report(_ dropped: [LedgerHead], keptThrough: UInt64, keysRestored: Int, leader: String, at: Int64) -> [UInt8] {
        JSONValue.object([
            "droppedAt": .string(Timestamp.iso8601(milliseconds: at)), "leader": .string(leader), "keptThrough": .int(Int64(keptThrough)),
            "keysRestored": .int(Int64(keysRestored)),
            "records": .array(
                dropped.map {
                    .object(["sequence": .int(Int64($0.sequence)), "hash": .string($0.hash), "recordedAt": .int($0.recordedAt)])
                }),
        ]).encoded()
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

/// A follower whose ledger shares not even its first record with its leader's.
struct UnrelatedLedger: Error, CustomStringConvertible {
    var leader: String
    var description: String {
        "this node's ledger and the leader's (\(leader)) share no record: it is not a tail to drop; restore this node from a backup of the leader, or empty its data directory (docs/cluster.md)"
    }
}

struct ReplicationRefused: Error, CustomStringConvertible {
    var status: Int
    var body: String
    var description: String { "the leader answered \(status)\(body.isEmpty ? "" : ": \(body)")" }
}
