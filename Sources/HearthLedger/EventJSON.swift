import HearthDomain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON form of a recorded event: one line of `hearth audit replay`, and what the schemas
/// in `schemas/` describe. Keys are sorted, so the same event always prints the same line.
public enum EventJSON {
    public static func line(_ envelope: EventEnvelope) throws -> String {
        String(decoding: try encoder.encode(Line(envelope)), as: UTF8.self)
    }

    /// Just the payload object, e.g. `{"reason":"email_link_verified"}`.
    public static func payload(_ payload: EventPayload) throws -> String {
        String(decoding: try encoder.encode(PayloadJSON(payload)), as: UTF8.self)
    }

    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private struct Line: Encodable {
        let envelope: EventEnvelope

        init(_ envelope: EventEnvelope) { self.envelope = envelope }

        enum CodingKeys: String, CodingKey {
            case sequence, stream, streamVersion, type, version, recordedAt, recordedAtMs, metadata, payload
            case previousHash, hash
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(envelope.sequence, forKey: .sequence)
            try container.encode(envelope.stream.description, forKey: .stream)
            try container.encode(envelope.streamVersion, forKey: .streamVersion)
            try container.encode(envelope.type.name, forKey: .type)
            try container.encode(envelope.type.version, forKey: .version)
            try container.encode(Timestamp.iso8601(milliseconds: envelope.recordedAt), forKey: .recordedAt)
            try container.encode(envelope.recordedAt, forKey: .recordedAtMs)
            try container.encode(envelope.metadata, forKey: .metadata)
            try container.encode(PayloadJSON(envelope.payload), forKey: .payload)
            try container.encode(hex(envelope.previousHash), forKey: .previousHash)
            try container.encode(hex(envelope.hash), forKey: .hash)
        }
    }

    private struct PayloadJSON: Encodable {
        let payload: EventPayload

        init(_ payload: EventPayload) { self.payload = payload }

        private struct Empty: Encodable {}

        func encode(to encoder: any Encoder) throws {
            switch payload {
            case .accountCreated(let event): try event.encode(to: encoder)
            case .signInRecorded(let event): try event.encode(to: encoder)
            case .providerLinked(let event): try event.encode(to: encoder)
            case .providerUnlinked(let event): try event.encode(to: encoder)
            case .passwordSet(let event): try event.encode(to: encoder)
            case .passwordRemoved(let event): try event.encode(to: encoder)
            case .emailVerified(let event): try event.encode(to: encoder)
            case .emailChanged(let event): try event.encode(to: encoder)
            case .profileUpdated(let event): try event.encode(to: encoder)
            case .customClaimsSet(let event): try event.encode(to: encoder)
            case .accountDisabled, .accountEnabled, .oobCodeConsumed: try Empty().encode(to: encoder)
            case .sessionsRevoked(let event): try event.encode(to: encoder)
            case .refreshTokenIssued(let event): try event.encode(to: encoder)
            case .refreshTokenRevoked(let event): try event.encode(to: encoder)
            case .accountDeleted(let event): try event.encode(to: encoder)
            case .anonymousPurged(let event): try event.encode(to: encoder)
            case .oobCodeIssued(let event): try event.encode(to: encoder)
            case .projectConfigChanged(let event): try event.encode(to: encoder)
            case .identityProviderSet(let event): try event.encode(to: encoder)
            case .identityProviderDeleted(let event): try event.encode(to: encoder)
            }
        }
    }
}

public func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}
