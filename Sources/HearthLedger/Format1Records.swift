import HearthDomain
import LMDB

// What Hearth wrote before personal data was sealed: format 1 records, with the event
// versions of then, in plain text. `package`: for tests and test support, which need such a
// ledger to prove it still reads, verifies and can be sealed (`hearth ledger seal`), and for
// the benchmark, which measures sealing against it (`writesBeforeSealing`).

extension PayloadCodec {
    /// `payload` as the version before sealing stored it: its type and bytes.
    package static func encodeBeforeSealing(_ payload: EventPayload) -> (type: EventType, bytes: [UInt8]) {
        var writer = ByteWriter()
        switch payload {
        case .accountCreated(let event):
            writer.write(event)
            return (.accountCreatedV2, writer.bytes)
        case .providerLinked(let event):
            writer.write(event.provider)
            return (.providerLinkedV1, writer.bytes)
        case .passwordSet(let event):
            writer.write(event.password)
            writer.write(event.reason.rawValue)
            return (.passwordSetV2, writer.bytes)
        case .emailVerified(let event):
            writer.write(event.email)
            return (.emailVerifiedV1, writer.bytes)
        case .emailChanged(let event):
            writer.write(event.email)
            writer.write(event.verified)
            return (.emailChangedV1, writer.bytes)
        case .profileUpdated(let event):
            writer.write(event)
            return (.profileUpdatedV1, writer.bytes)
        case .customClaimsSet(let event):
            writer.write(event.claims)
            return (.customClaimsSetV1, writer.bytes)
        case .oobCodeIssued(let event):
            writer.write(event)
            return (.oobCodeIssuedV1, writer.bytes)
        default:
            let parts = encode(payload)
            precondition(parts.personal == nil)
            return (payload.type, parts.open)
        }
    }
}

extension Ledger {
    /// Appends `payloads` as format 1 records, personal data and client address in plain text,
    /// as a ledger written before sealing holds them; returns them as `append` does.
    /// `version`: the stream's version, when the caller has read it already.
    @discardableResult
    package func appendBeforeSealing(
        _ payloads: [EventPayload], to stream: StreamID, version known: UInt64? = nil, metadata: Metadata, at now: Int64,
        in txn: WriteTransaction
    ) throws -> [EventEnvelope] {
        var head = try head(in: txn)
        var version = try known ?? self.version(of: stream, in: txn)
        var appended: [EventEnvelope] = []
        for payload in payloads {
            let (type, bytes) = PayloadCodec.encodeBeforeSealing(payload)
            let previous = head
            head.sequence += 1
            head.recordedAt = max(now, head.recordedAt)
            version += 1
            var record = RecordFormat.encodeUnhashed(
                sequence: head.sequence, recordedAt: head.recordedAt, stream: stream, streamVersion: version, type: type,
                payload: bytes, metadata: metadata, sealed: nil, previousHash: previous.hash)
            head.hash = record.withUnsafeBytes { ChainHash.of($0) }
            record.append(contentsOf: head.hash)
            try txn.put(events, BigEndianUInt64(head.sequence), record, options: .append)
            try txn.put(streams, Self.streamKey(stream, version), BigEndianUInt64(head.sequence), options: .noOverwrite)
            appended.append(
                EventEnvelope(
                    sequence: head.sequence, stream: stream, streamVersion: version, type: type, recordedAt: head.recordedAt,
                    metadata: metadata, payload: payload, previousHash: previous.hash, hash: head.hash, personalData: .none))
        }
        return appended
    }
}
