import HearthDomain
import HearthLedger

/// An event as the ledger recorded it: its place in the global sequence and in its stream,
/// when, by whom, what, and its link in the hash chain (hex). What `execute` acknowledges and
/// the audit queries return.
public struct StoredEvent: Equatable, Sendable {
    let envelope: EventEnvelope

    init(_ envelope: EventEnvelope) { self.envelope = envelope }

    public var sequence: UInt64 { envelope.sequence }
    public var stream: StreamID { envelope.stream }
    public var streamVersion: UInt64 { envelope.streamVersion }
    public var type: EventType { envelope.type }
    /// Unix milliseconds; never decreases along the sequence.
    public var recordedAt: Int64 { envelope.recordedAt }
    public var metadata: Metadata { envelope.metadata }
    public var payload: EventPayload { envelope.payload }
    public var event: Event { envelope.event }
    /// SHA-256 of the record, previous hash included, in hex.
    public var hash: String { hex(envelope.hash) }
    public var previousHash: String { hex(envelope.previousHash) }
    /// Whether the event's personal data was erased (its key destroyed): the payload's
    /// personal fields (`PersonalData.fields`) then hold empty values.
    public var isErased: Bool { envelope.personalData == .erased }
    /// The fields erased, as the audit line names them (`erased`); none unless erased.
    public var erasedFields: [String] { isErased ? EventJSON.erasedFields(of: type) : [] }

    /// The audit line: one JSON object with sorted keys, as `schemas/` describes it.
    public func jsonLine() throws -> String { try EventJSON.line(envelope) }

    /// Just the payload as a JSON object, e.g. `{"reason":"email_link_verified"}`.
    public func payloadJSON() throws -> String { try EventJSON.payload(of: envelope) }
}

/// The ledger's last event: its sequence number (0 when empty), hash (hex) and time.
public struct LedgerHead: Equatable, Sendable {
    public var sequence: UInt64
    public var hash: String
    public var recordedAt: Int64

    init(_ head: Ledger.Head) {
        sequence = head.sequence
        hash = hex(head.hash)
        recordedAt = head.recordedAt
    }
}
