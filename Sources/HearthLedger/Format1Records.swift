import Crypto
import HearthDomain
import LMDB

// What Hearth wrote before personal data was sealed: format 1 records, with the event
// versions of then, in plain text. `package`: for tests and test support only, which need
// such a ledger to prove it still reads, verifies and can be sealed (`hearth ledger seal`).

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
    /// as a ledger written before sealing holds them.
    package func appendBeforeSealing(
        _ payloads: [EventPayload], to stream: StreamID, metadata: Metadata, at now: Int64, in txn: WriteTransaction
    ) throws {
        var head = try head(in: txn)
        var version = try self.version(of: stream, in: txn)
        for payload in payloads {
            let (type, bytes) = PayloadCodec.encodeBeforeSealing(payload)
            head.sequence += 1
            version += 1
            var record = RecordFormat.encodeUnhashed(
                sequence: head.sequence, recordedAt: max(now, head.recordedAt), stream: stream, streamVersion: version, type: type,
                payload: bytes, metadata: metadata, sealed: nil, previousHash: head.hash)
            head.hash = ChainHash(SHA256.hash(data: record))
            record.append(contentsOf: head.hash)
            try txn.put(events, BigEndianUInt64(head.sequence), record, options: .append)
            try txn.put(streams, Self.streamKey(stream, version), BigEndianUInt64(head.sequence), options: .noOverwrite)
        }
    }
}
