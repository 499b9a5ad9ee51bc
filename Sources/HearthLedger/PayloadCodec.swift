import HearthDomain

/// Event payloads to and from their stored bytes. Decoding dispatches on the stored type name
/// and version; an older version is upcast here, on read, and never rewritten in the ledger.
public enum PayloadCodec {
    public static func encode(_ payload: EventPayload) -> [UInt8] {
        var writer = ByteWriter()
        switch payload {
        case .accountCreated(let event): writer.write(event)
        case .signInRecorded(let event): writer.write(event.method)
        case .providerLinked(let event): writer.write(event.provider)
        case .providerUnlinked(let event): writer.write(event.providerId)
        case .passwordSet(let event):
            writer.write(event.password)
            writer.write(event.reason.rawValue)
        case .passwordRemoved(let event): writer.write(event.reason.rawValue)
        case .emailVerified(let event): writer.write(event.email)
        case .emailChanged(let event):
            writer.write(event.email)
            writer.write(event.verified)
        case .profileUpdated(let event): writer.write(event)
        case .customClaimsSet(let event): writer.write(event.claims)
        case .accountDisabled, .accountEnabled, .oobCodeConsumed: break
        case .sessionsRevoked(let event):
            writer.write(event.validSince)
            writer.write(event.reason.rawValue)
        case .refreshTokenIssued(let event): writer.write(event.tokenHash)
        case .refreshTokenRevoked(let event): writer.write(event.tokenHash)
        case .accountDeleted(let event): writer.write(event.by.rawValue)
        case .anonymousPurged(let event): writer.write(event.dueAt)
        case .oobCodeIssued(let event): writer.write(event)
        case .projectConfigChanged(let event): writer.write(event)
        }
        return writer.bytes
    }

    /// Decodes a payload stored as `type`. Unknown types and versions are errors, not skips:
    /// a ledger written by a newer Hearth must not be silently misread.
    public static func decode(_ type: EventType, from bytes: UnsafeRawBufferPointer) throws -> EventPayload {
        var reader = ByteReader(bytes)
        let payload = try decodeCurrent(type, &reader)
        guard reader.isAtEnd else { throw BinaryFormatError.trailingBytes(reader.remaining) }
        return payload
    }

    private static func decodeCurrent(_ type: EventType, _ reader: inout ByteReader) throws -> EventPayload {
        switch type {
        case .accountCreated: return .accountCreated(try reader.read())
        case .signInRecorded: return .signInRecorded(SignInRecorded(method: try reader.readString()))
        case .providerLinked: return .providerLinked(ProviderLinked(provider: try reader.read()))
        case .providerUnlinked: return .providerUnlinked(ProviderUnlinked(providerId: try reader.readString()))
        case .passwordSet: return .passwordSet(PasswordSet(password: try reader.read(), reason: try reader.readEnum()))
        case .passwordRemoved: return .passwordRemoved(PasswordRemoved(reason: try reader.readEnum()))
        case .emailVerified: return .emailVerified(EmailVerified(email: try reader.readString()))
        case .emailChanged:
            return .emailChanged(EmailChanged(email: try reader.readOptionalString(), verified: try reader.readBool()))
        case .profileUpdated: return .profileUpdated(try reader.read())
        case .customClaimsSet: return .customClaimsSet(CustomClaimsSet(claims: try reader.readOptionalString()))
        case .accountDisabled: return .accountDisabled
        case .accountEnabled: return .accountEnabled
        case .sessionsRevoked:
            return .sessionsRevoked(SessionsRevoked(validSince: try reader.readInt64(), reason: try reader.readEnum()))
        case .refreshTokenIssued: return .refreshTokenIssued(RefreshTokenIssued(tokenHash: try reader.readString()))
        case .refreshTokenRevoked: return .refreshTokenRevoked(RefreshTokenRevoked(tokenHash: try reader.readString()))
        case .accountDeleted: return .accountDeleted(AccountDeleted(by: try reader.readEnum()))
        case .anonymousPurged: return .anonymousPurged(AnonymousPurged(dueAt: try reader.readInt64()))
        case .oobCodeIssued: return .oobCodeIssued(try reader.read())
        case .oobCodeConsumed: return .oobCodeConsumed
        case .projectConfigChanged: return .projectConfigChanged(try reader.read())
        default: throw BinaryFormatError.unknownEventType(type.name, version: type.version)
        }
    }
}
