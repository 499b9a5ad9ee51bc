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

    func fold(_ events: [RecordedEvent]) throws -> FoldedChunk {
        try environment.read { txn in
            let stored = projections.reader(txn)
            let carried = self.carried
            let fold = AccountFold { key in
                for chunk in carried { if let account = chunk.account(key) { return account } }
                return try stored.account(key.uid, in: key.project)
            }
            var chunk = FoldedChunk(lastSequence: events[events.count - 1].sequence, eventCount: events.count)
            chunk.ops.reserveCapacity(events.count)
            // Read in place: iterating by value would copy (retain and release) every event.
            try events.withUnsafeBufferPointer { events in
                for index in events.indices {
                    guard case .account(let project, let uid) = events[index].stream else {
                        chunk.unfolded.append((chunk.ops.count, events[index]))
                        continue
                    }
                    let key = AccountKey(project: project, uid: uid)
                    try fold.apply(events[index].payload, at: events[index].recordedAt, to: key, ops: &chunk.ops)
                }
            }
            chunk.accounts = fold.finish()
            self.carried = [chunk.accounts] + carried.prefix(Self.carriedChunks - 1)
            return chunk
        }
    }
}
