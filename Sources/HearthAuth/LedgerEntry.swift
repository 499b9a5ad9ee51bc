import HearthDomain
import HearthStore

/// One event of a stream's history (an account's, a project's settings), as the console shows
/// it: what, when, who and from where, and the payload's JSON.
public struct LedgerEntry: Sendable {
    public var sequence: UInt64
    public var type: EventType
    public var recordedAt: Int64
    public var metadata: Metadata
    /// The payload's JSON form (personal data opened, or left out once erased).
    public var payload: String
    /// The account's key was destroyed: its personal fields are named, not shown.
    public var isErased: Bool

    init(_ event: StoredEvent) throws {
        self.init(
            sequence: event.sequence, type: event.type, recordedAt: event.recordedAt, metadata: event.metadata,
            payload: try event.payloadJSON(), isErased: event.isErased)
    }

    init(sequence: UInt64, type: EventType, recordedAt: Int64, metadata: Metadata, payload: String, isErased: Bool) {
        self.sequence = sequence
        self.type = type
        self.recordedAt = recordedAt
        self.metadata = metadata
        self.payload = payload
        self.isErased = isErased
    }
}
