import Foundation
import HearthStore
import Synchronization

/// The leader's end of a new node's start, `GET /hearth/v1/cluster/snapshot`: today's
/// `hearth backup`, streamed over the replication channel. One consistent, compacted copy of the
/// LMDB environment (ledger and projections at the same head), then the key files beside it (the
/// ledger key, the signing keys, the secrets key), so that the new node publishes the same JWKS,
/// verifies every node's tokens and opens every sealed record. Only with the cluster's
/// credential, only on the leader, one at a time (each is a full copy on the leader's disk,
/// removed once sent).
public struct SnapshotSource: Sendable {
    let store: AccountStore
    let token: String
    private let busy = Busy()

    /// A copy a crash left behind holds personal data that compaction and erasure never reach:
    /// removed at once, when the daemon starts.
    public init(store: AccountStore, token: String) {
        self.store = store
        self.token = token
        Self.discard(directory)
    }

    private var directory: String { store.directory.path + "/snapshot.partial" }

    /// A copy ready to send: where it is, its files in the order they go, and the ledger's head
    /// when it was taken.
    public struct Snapshot: Sendable {
        public var directory: String
        public var files: [BackupFile]
        public var head: UInt64
        public var bytes: Int { files.reduce(0) { $0 + $1.bytes } }
    }

    public enum Preparation: Sendable {
        case refused(status: Int, reason: String)
        case ready(Snapshot)
    }

    /// Header names: the ledger's head when the copy was taken, and the bytes of the files.
    public static let headHeader = "Hearth-Head"
    public static let bytesHeader = "Hearth-Snapshot-Bytes"

    /// Takes the copy (on a thread of its own); `finished` removes it.
    public func prepare(authorization: String?) async -> Preparation {
        guard ReplicationCredential(token: token).accepts(authorization) else {
            return .refused(status: 401, reason: ReplicationCredential.refusal)
        }
        guard case .leader = store.writeAuthority.standing else { return .refused(status: 409, reason: "this node does not lead") }
        guard busy.take() else { return .refused(status: 503, reason: "a snapshot is being sent: try again when it is done") }
        let directory = directory
        do {
            let head = try store.ledgerHead().sequence
            let files = try await store.scan { [store] _ in
                // A copy a crash left behind goes first.
                Self.discard(directory)
                return try store.backUp(into: directory)
            }
            return .ready(Snapshot(directory: directory, files: files, head: head))
        } catch {
            Self.discard(directory)
            busy.release()
            return .refused(status: 503, reason: "the snapshot could not be taken: \(error)")
        }
    }

    /// The copy was sent, or its sending failed: removed, and the next may be taken.
    public func finished(_ snapshot: Snapshot) {
        Self.discard(snapshot.directory)
        busy.release()
    }

    private static func discard(_ directory: String) {
        DataDirectory.discardBackup(in: directory)
        rmdir(directory)
    }

    /// What precedes each file in the stream: its name's length (2 bytes, big-endian), its name,
    /// its size (8 bytes, big-endian).
    public static func header(name: String, size: Int) -> [UInt8] {
        let utf8 = Array(name.utf8)
        var bytes = withUnsafeBytes(of: UInt16(utf8.count).bigEndian) { Array($0) }
        bytes += utf8
        withUnsafeBytes(of: UInt64(size).bigEndian) { bytes += $0 }
        return bytes
    }

    /// One snapshot at a time. One whose sending never began (its client gone before the answer
    /// started, so nothing called `finished`) holds the next back for an hour at most.
    private final class Busy: Sendable {
        private let takenAt = Mutex<ContinuousClock.Instant?>(nil)
        static let abandonedAfter = Duration.seconds(3600)

        func take() -> Bool {
            takenAt.withLock { takenAt in
                if let since = takenAt, ContinuousClock.now - since < Self.abandonedAfter { return false }
                takenAt = .now
                return true
            }
        }

        func release() { takenAt.withLock { $0 = nil } }
    }
}
