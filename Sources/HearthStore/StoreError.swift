import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

/// What can go wrong in the store, in its own terms: callers above it never see LMDB's,
/// the ledger's or the projections' errors. A refused command's `AuthError`, and any error a
/// transaction body throws itself, pass through unchanged.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A read-only open of a directory that holds no ledger.
    case noLedger(directory: String)
    /// The ledger sealed personal data, and the data directory's ledger key is gone.
    case ledgerKeyMissing(directory: String)
    /// A key or value past LMDB's limits (keys are at most 511 bytes): bad input that slipped
    /// past validation, never a server fault.
    case valueTooLarge
    /// The map reached its maximum size.
    case full
    /// The disk the data directory is on is full (ENOSPC, or a quota): writes fail until
    /// space returns; reads go on, and nothing acknowledged is lost.
    case diskFull
    /// The store was closed (shutdown) before the write could run.
    case closed
    /// The writer did not commit a probe within its deadline.
    case writerStalled
    /// In a cluster, this node is not the leader (or its lease may have lapsed): it neither
    /// writes nor acknowledges. `leader` names the node that leads, when one is known.
    case notLeader(leader: String?)
    /// In a cluster, the synchronous followers did not confirm a write in time: it is not
    /// acknowledged, and the leader refuses writes until they confirm it.
    case notReplicated
    /// What a follower received from its leader does not continue its ledger, or is malformed.
    case replication(String)
    case wrongExpectedVersion(stream: StreamID, expected: ExpectedVersion, actual: UInt64)
    /// Another process wrote the projections during a catch-up or rebuild.
    case concurrentWrite
    /// A catch-up was asked to stop (shutdown) before it reached the ledger's head.
    case interrupted
    /// A stored record could not be read back (corruption, or a newer format).
    case unreadable(String)
    /// A backup's target directory already has files in it.
    case backupTargetNotEmpty(directory: String)
    /// A restore into a directory that already holds a ledger, without being told to replace it.
    case restoreTargetHoldsLedger(directory: String)
    /// A restore's swap was cut short (a crash); the next writer to open the directory finishes it.
    case restoreInterrupted(directory: String)
    /// A backup lists a file a restore may not bring in (only the ledger and key files).
    case notRestorable(name: String)
    /// Any other storage failure, with LMDB's message.
    case storage(String)

    public var description: String {
        switch self {
        case .noLedger(let directory): "no Hearth ledger in \(directory) (data.mdb not found)"
        case .ledgerKeyMissing(let directory):
            "\(directory)/\(DataDirectory.ledgerKeyFileName) is missing, and the ledger's personal data is sealed under it: restore it from the backup it was copied to"
        case .valueTooLarge: "a value is too long to store"
        case .full: "the data file reached its maximum size"
        case .diskFull: "the data directory's disk is full"
        case .closed: "the store is closed"
        case .writerStalled: "the writer did not commit in time"
        case .replication(let detail): "replication: \(detail)"
        case .notLeader(let leader): "this node is not the cluster's leader" + (leader.map { " (\($0) is)" } ?? "")
        case .notReplicated: "the synchronous followers have not confirmed the leader's writes in time"
        case .wrongExpectedVersion(let stream, let expected, let actual):
            "stream \(stream) is at version \(actual), expected \(expected)"
        case .concurrentWrite: ProjectionError.concurrentWrite.description
        case .interrupted: ProjectionError.interrupted.description
        case .unreadable(let reason): "a stored record could not be read: \(reason)"
        case .backupTargetNotEmpty(let directory): "\(directory) is not empty; back up into a new directory"
        case .restoreTargetHoldsLedger(let directory):
            "\(directory) already holds a ledger; restore into an empty directory, or pass --replace to overwrite it"
        case .restoreInterrupted(let directory):
            "a restore into \(directory) was interrupted while swapping its files; start the daemon (or run hearth restore again) to finish it"
        case .notRestorable(let name): "a backup may not restore \(name) (only data.mdb and key files)"
        case .storage(let message): message
        }
    }

    /// The store's error for one from a layer below it, or `nil` for errors that pass through.
    init?(translating error: any Error) {
        switch error {
        case let error as LMDBError:
            switch error {
            case .badValueSize: self = .valueTooLarge
            case .mapFull: self = .full
            case .closed: self = .closed
            case _ where WriteHealth.isDiskFull(error.code): self = .diskFull
            default: self = .storage(error.description)
            }
        case WriterError.stopped: self = .closed
        case let error as LedgerError:
            switch error {
            case .wrongExpectedVersion(let stream, let expected, let actual):
                self = .wrongExpectedVersion(stream: stream, expected: expected, actual: actual)
            case .missingEvent: self = .unreadable(error.description)
            }
        case let error as ProjectionError:
            switch error {
            case .concurrentWrite: self = .concurrentWrite
            case .interrupted: self = .interrupted
            }
        case let error as BinaryFormatError: self = .unreadable("\(error)")
        case let error as ReplicationError: self = .replication(error.description)
        case let error as LedgerKeyError: self = .unreadable(error.description)
        case let error as DurableFiles.Failure: self = .storage(error.description)
        case let error as EnvironmentError: self = .storage(error.description)
        default: return nil
        }
    }
}

/// Runs `body`, turning the errors of the layers below the store into `StoreError`s.
func translatingErrors<R>(_ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch {
        throw StoreError(translating: error) ?? error
    }
}

func translatingErrors<R>(_ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch {
        throw StoreError(translating: error) ?? error
    }
}
