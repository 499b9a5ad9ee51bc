import Foundation
import HearthCluster
import HearthDomain
import HearthStore
import Synchronization

extension LedgerBenchmark {
    /// The group commit again, on a leader that acknowledges each sign-up only once a follower
    /// holds it: the follower's requests go through the leader's replication endpoint as the
    /// daemons' do (long poll, head check, confirmation), in process rather than over HTTP, its
    /// batches applied and fsynced on the same disk. Returns the leader's rate and, for each
    /// batch the follower applied, the replication lag: ms from the leader's recording of the
    /// batch's last record to the follower's commit.
    func synchronousGroupCommit(path: String, load: Load) async throws -> (rate: Double, lags: [Int64]) {
        let leader = try DataDirectory(path).open(as: "hearth bench")
        defer { leader.close() }
        try FileManager.default.createDirectory(atPath: path + "-follower", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: leader.directory.ledgerKeyFile, toPath: path + "-follower/ledger-key")
        let follower = try DataDirectory(path + "-follower").open(as: "hearth bench")
        defer { follower.close() }
        follower.writeAuthority.follow("leader")
        leader.writeAuthority.lead(term: 1, until: .now + .seconds(24 * 3600))
        leader.synchronousCommit.require(.followers(["follower"], atLeast: 1))

        let token = String(repeating: "b", count: 32)
        let source = ReplicationSource(store: leader, token: token)
        let lags = Mutex<[Int64]>([])
        let pump = Task {
            while !Task.isCancelled {
                let head = try follower.ledgerHead()
                let answer = await source.answer(
                    ReplicationSource.Request(after: head.sequence, hash: head.hash, node: "follower", authorization: "Bearer " + token))
                guard answer.status == 200 else { continue }
                let applied = try await follower.replication.apply(try ReplicationBatch(received: answer.body))
                lags.withLock { $0.append(applied.lag) }
            }
        }
        defer { pump.cancel() }
        let (rate, _) = try await groupCommit(store: leader, load: load)
        return (rate, lags.withLock { $0 })
    }

    /// The replication lag's 50th and 99th percentiles (ms) over every round's follower batches
    /// together, and how many there were: at capacity a round applies only a few dozen batches,
    /// too few for a 99th percentile of its own.
    static func lagPercentiles(_ rounds: [ClusterRound]) -> (p50: Double, p99: Double, batches: Int) {
        let sorted = rounds.flatMap(\.synchronous.lags).sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? .nan : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
        }
        return (percentile(0.5), percentile(0.99), sorted.count)
    }
}
