import HearthDomain
import HearthStore

/// `hearth audit …`: read-only views of the ledger, safe beside a running daemon. The store
/// answers the queries; this prints them.
public struct AuditTool {
    public typealias Filter = StoreAudit.Filter

    public enum Format: String, Sendable, CaseIterable {
        case json, text
    }

    public let store: AccountStore

    public init(store: AccountStore) { self.store = store }

    /// Prints matching events, one per line. A whole-ledger replay reports
    /// `progress(scanned, total)` after each batch.
    @discardableResult
    public func replay(
        _ filter: Filter, format: Format, to output: Output, progress: (_ scanned: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws -> StoreAudit.ReplaySummary {
        let summary = try store.audit.replay(filter, progress: progress) { event in
            output.line(format == .json ? try event.jsonLine() : Self.text(event))
        }
        output.flush()
        return summary
    }

    /// The account as of `time` (without its personal fields if they were erased since), the
    /// last event folded into it, and whether they were.
    public func account(_ uid: UserID, in project: ProjectID, at time: Int64) throws
        -> (account: Account?, through: StoredEvent?, isErased: Bool)
    {
        try store.audit.account(uid, in: project, at: time)
    }

    /// One event on one line; an erased event names its erased fields at the end, never their placeholders.
    public static func text(_ event: StoredEvent) -> String {
        let payload = (try? event.payloadJSON()) ?? ""
        var actor = event.metadata.actor.rawValue
        if let id = event.metadata.actorId { actor += ":\(id)" }
        let erased = event.isErased ? "  erased: \(event.erasedFields.joined(separator: ", "))" : ""
        return
            "#\(event.sequence)  \(Timestamp.iso8601(milliseconds: event.recordedAt))  \(event.stream) v\(event.streamVersion)  \(event.type.name)  by \(actor)  \(payload)\(erased)"
    }
}
