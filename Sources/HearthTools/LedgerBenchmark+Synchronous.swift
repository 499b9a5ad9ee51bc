import Foundation
import HearthCluster
import HearthDomain
import HearthStore
import Synchronization

extension LedgerBenchmark {
    /// The group commit again, on a leader that acknowledges each sign-up only once a follower
    /// holds it: the follower's requests go through the leader's replication endpoint as the
    /// daemons' do (long poll, head check, confirmation), in process rather than over HTTP, its
    /// batches applied and fsynced on the same disk. Returns the leader's rate and the
    /// replication lag (ms from the leader's recording of a batch's last record to the
    /// follower's commit) at the 50th and 99th percentiles.
    func synchronousGroupCommit(path: String, load: Load) async throws -> (rate: Double, lagP50: Double, lagP99: Double) {
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
                let lag = follower.clock.now() - applied.recordedAt
                lags.withLock { $0.append(lag) }
            }
        }
        defer { pump.cancel() }
        let (rate, _) = try await groupCommit(store: leader, load: load)
        let sorted = lags.withLock { $0 }.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? .nan : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
        }
        return (rate, percentile(0.5), percentile(0.99))
    }
}
