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

    /// A recorded event's payload object, its erased fields left out.
    public static func payload(of envelope: EventEnvelope) throws -> String {
        guard envelope.personalData == .erased else { return try payload(envelope.payload) }
        return String(decoding: try encoder.encode(try erasedPayload(envelope)), as: UTF8.self)
    }

    /// The payload without the erased fields: they are named, never shown as the placeholders
    /// they decode to.
    private static func erasedPayload(_ envelope: EventEnvelope) throws -> JSONTree {
        let tree = try JSONDecoder().decode(JSONTree.self, from: try encoder.encode(PayloadJSON(envelope.payload)))
        return tree.removing(PersonalData.fields(of: envelope.type))
    }

    /// What an erased event names as erased: its personal payload fields and the client's address.
    public static func erasedFields(of type: EventType) -> [String] { PersonalData.fields(of: type) + [PersonalData.metadataField] }

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
            case previousHash, hash, erased
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
            if envelope.personalData == .erased {
                try container.encode(try EventJSON.erasedPayload(envelope), forKey: .payload)
                try container.encode(EventJSON.erasedFields(of: envelope.type), forKey: .erased)
            } else {
                try container.encode(PayloadJSON(envelope.payload), forKey: .payload)
            }
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
            case .accountDisabled, .accountEnabled, .oobCodeConsumed, .oobCodeExpired: try Empty().encode(to: encoder)
            case .sessionsRevoked(let event): try event.encode(to: encoder)
            case .refreshTokenIssued(let event): try event.encode(to: encoder)
            case .refreshTokenRevoked(let event): try event.encode(to: encoder)
            case .accountDeleted(let event): try event.encode(to: encoder)
            case .anonymousPurged(let event): try event.encode(to: encoder)
            case .accountErased(let event): try event.encode(to: encoder)
            case .secondFactorEnrolled(let event): try event.encode(to: encoder)
            case .secondFactorWithdrawn(let event): try event.encode(to: encoder)
            case .secondFactorUsed(let event): try event.encode(to: encoder)
            case .oobCodeIssued(let event): try event.encode(to: encoder)
            case .projectConfigChanged(let event): try event.encode(to: encoder)
            case .identityProviderSet(let event): try event.encode(to: encoder)
            case .identityProviderDeleted(let event): try event.encode(to: encoder)
            case .termStarted(let event): try event.encode(to: encoder)
            case .signingKeyPublished(let event): try event.encode(to: encoder)
            case .signingKeyActivated(let event), .signingKeyWithdrawn(let event): try event.encode(to: encoder)
            }
        }
    }
}

/// A JSON value as a tree, to drop fields from an encoded payload by path.
private enum JSONTree: Codable {
    case object([String: JSONTree])
    case array([JSONTree])
    case string(String)
    case number(Double)
    case integer(Int64)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONTree].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .object(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The tree without the members at `paths` ("email", "provider.federatedId").
    func removing(_ paths: [String]) -> JSONTree {
        guard case .object(var members) = self else { return self }
        for path in paths {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 1 {
                members[parts[0]] = nil
            } else if let inner = members[parts[0]] {
                members[parts[0]] = inner.removing([parts[1]])
            }
        }
        return .object(members)
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
