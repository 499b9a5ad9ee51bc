import HearthDomain
import HearthLedger
import LMDB

/// A chunk of events folded off the writer thread, for `ProjectionWriter.store` to write in
/// one transaction.
struct FoldedChunk: Sendable {
    /// The index changes of the chunk's account events, in event order.
    var ops: [IndexOp] = []
    /// The project and code events, each with the number of `ops` that come before it.
    var unfolded: [(position: Int, event: RecordedEvent)] = []
    /// The accounts the chunk changed.
    var accounts = FoldedAccounts()
    var lastSequence: UInt64
    var eventCount: Int
}

/// Folds a catch-up's chunks, one after another, while the writer thread stores earlier ones.
///
/// Chunk i is folded while the writer may still be storing the `carriedChunks` chunks before
/// it, so their accounts come from what folding them left here, and only older accounts from
/// a read snapshot: `fold` may run once every chunk before those is committed.
final class ChunkFolder {
    private let environment: Environment
    private let projections: Projections
    /// How many chunks' accounts are kept: how far the writer may lag behind the fold.
    static let carriedChunks = 2
    /// The accounts of the last chunks, newest first.
    private var carried: [FoldedAccounts] = []

    init(environment: Environment, projections: Projections) {
        self.environment = environment
        self.projections = projections
    }

    /// Folds a chunk's events, given newest first. Each is moved off the end of the array and
    /// folded from a local: folding it in place would copy its payload (a retain per field),
    /// as the fold cannot prove the array unchanged meanwhile.
    func fold(_ newestFirst: consuming [RecordedEvent]) throws -> FoldedChunk {
        var remaining = newestFirst
        return try environment.read { txn in
            let stored = projections.reader(txn)
            let carried = self.carried
            let fold = AccountFold(capacity: remaining.count) { key in
                for chunk in carried { if let account = chunk.account(key) { return account } }
                return try stored.account(key.uid, in: key.project)
            }
            var chunk = FoldedChunk(lastSequence: remaining[0].sequence, eventCount: remaining.count)
            chunk.ops.reserveCapacity(remaining.count)
            while let event = remaining.popLast() {
                guard case .account(let project, let uid) = event.stream else {
                    chunk.unfolded.append((chunk.ops.count, event))
                    continue
                }
                try fold.apply(event.payload, at: event.recordedAt, to: AccountKey(project: project, uid: uid), ops: &chunk.ops)
            }
            chunk.accounts = fold.finish()
            self.carried = [chunk.accounts] + carried.prefix(Self.carriedChunks - 1)
            return chunk
        }
    }
}
