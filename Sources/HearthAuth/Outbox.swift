import HearthDomain
import Synchronization

/// Email action links "sent" in the development profile: kept in memory and listed by
/// `GET /emulator/v1/projects/{p}/oobCodes`, as the Auth Emulator does. The ledger holds only
/// each code's hash, so this is the one place the plain code lives.
public final class Outbox: Sendable {
    public struct Entry: Sendable, Equatable {
        public var project: ProjectID
        public var email: String
        public var newEmail: String?
        public var requestType: OOBCodeIssued.RequestType
        public var oobCode: String
        public var oobLink: String
    }

    private let entries = Mutex<[Entry]>([])
    /// Oldest entries are dropped beyond this, so a long-running daemon stays bounded.
    private let capacity: Int

    public init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    public func deliver(_ entry: Entry) {
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    public func entries(of project: ProjectID) -> [Entry] {
        entries.withLock { $0.filter { $0.project == project } }
    }
}
