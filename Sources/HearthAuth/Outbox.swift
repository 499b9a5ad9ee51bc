import HearthDomain
import Synchronization

/// Action links "sent" in the development profile: kept in memory and listed by
/// `GET /emulator/v1/projects/{p}/oobCodes`, as the Auth Emulator does.
public final class Outbox: Sendable {
    private let links = Mutex<[ActionLink]>([])
    /// Oldest links are dropped beyond this, so a long-running daemon stays bounded.
    private let capacity: Int

    public init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    public func deliver(_ link: ActionLink) {
        links.withLock { links in
            links.append(link)
            if links.count > capacity { links.removeFirst(links.count - capacity) }
        }
    }

    public func links(of project: ProjectID) -> [ActionLink] {
        links.withLock { $0.filter { $0.project == project } }
    }
}
