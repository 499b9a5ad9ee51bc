import HearthDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Event payloads to and from their stored bytes. Decoding dispatches on the stored type name
/// and version; an older version is upcast here, on read, and never rewritten in the ledger.
public enum PayloadCodec {
    public static func encode(_ payload: EventPayload) -> [UInt8] {
        var writer = ByteWriter()
        switch payload {
        case .accountCreated(let event): writer.write(event)
        case .signInRecorded(let event): writer.write(event.method.rawValue)
        case .providerLinked(let event): writer.write(event.provider)
        case .providerUnlinked(let event):
            writer.write(event.providerId.rawValue)
            writer.write(event.reason.rawValue)
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
        case .anonymousPurged(let event):
            writer.write(event.dueAt)
            writer.write(event.rule?.rawValue)
            writer.write(event.since)
        case .oobCodeIssued(let event): writer.write(event)
        case .projectConfigChanged(let event): writer.write(event)
        case .identityProviderSet(let event): writer.write(event)
        case .identityProviderDeleted(let event): writer.write(event.providerId.rawValue)
        }
        return writer.bytes
    }

    /// Reads one stored (type, version) as a current payload. An older version's entry is
    /// where its upcaster goes.
    public struct Decoder: Sendable {
        public let type: EventType
        let utf8Name: [UInt8]
        let read: @Sendable (inout ByteReader) throws -> EventPayload

        init(_ type: EventType, _ read: @escaping @Sendable (inout ByteReader) throws -> EventPayload) {
            self.type = type
            utf8Name = Array(type.name.utf8)
            self.read = read
        }

        /// Decodes a whole payload; trailing bytes are an error.
        public func decode(_ bytes: UnsafeRawBufferPointer) throws -> EventPayload {
            var reader = ByteReader(bytes)
            let payload = try read(&reader)
            guard reader.isAtEnd else { throw BinaryFormatError.trailingBytes(reader.remaining) }
            return payload
        }
    }

    /// Every (type, version) the ledger can contain. Unknown types and versions are errors, not
    /// skips: a ledger written by a newer Hearth must not be silently misread.
    public static let decoders: [Decoder] = [
        Decoder(.accountCreated) { .accountCreated(try $0.read()) },
        Decoder(.accountCreatedV1) { .accountCreated(try AccountCreated(from: &$0, passwordLayout: .v1)) },
        Decoder(.signInRecorded) { .signInRecorded(SignInRecorded(method: SignInMethod(rawValue: try $0.readString()))) },
        Decoder(.providerLinked) { .providerLinked(ProviderLinked(provider: try $0.read())) },
        Decoder(.providerUnlinked) {
            .providerUnlinked(ProviderUnlinked(providerId: ProviderID(try $0.readString()), reason: try $0.readEnum()))
        },
        Decoder(.providerUnlinkedV1) { .providerUnlinked(ProviderUnlinked(providerId: ProviderID(try $0.readString()))) },
        Decoder(.passwordSet) { .passwordSet(PasswordSet(password: try $0.read(), reason: try $0.readEnum())) },
        Decoder(.passwordSetV1) {
            .passwordSet(PasswordSet(password: try PasswordHash(from: &$0, layout: .v1), reason: try $0.readEnum()))
        },
        Decoder(.passwordRemoved) { .passwordRemoved(PasswordRemoved(reason: try $0.readEnum())) },
        Decoder(.emailVerified) { .emailVerified(EmailVerified(email: try $0.readString())) },
        Decoder(.emailChanged) { .emailChanged(EmailChanged(email: try $0.readOptionalString(), verified: try $0.readBool())) },
        Decoder(.profileUpdated) { .profileUpdated(try $0.read()) },
        Decoder(.customClaimsSet) { .customClaimsSet(CustomClaimsSet(claims: try $0.readOptionalString())) },
        Decoder(.accountDisabled) { _ in .accountDisabled },
        Decoder(.accountEnabled) { _ in .accountEnabled },
        Decoder(.sessionsRevoked) { .sessionsRevoked(SessionsRevoked(validSince: try $0.readInt64(), reason: try $0.readEnum())) },
        Decoder(.refreshTokenIssued) { .refreshTokenIssued(RefreshTokenIssued(tokenHash: try $0.readString())) },
        Decoder(.refreshTokenIssuedV1) {
            .refreshTokenIssued(RefreshTokenIssued(tokenHash: try $0.readString(), namesAccount: false))
        },
        Decoder(.refreshTokenRevoked) { .refreshTokenRevoked(RefreshTokenRevoked(tokenHash: try $0.readString())) },
        Decoder(.accountDeleted) { .accountDeleted(AccountDeleted(by: try $0.readEnum())) },
        Decoder(.anonymousPurged) {
            .anonymousPurged(
                AnonymousPurged(
                    dueAt: try $0.readInt64(), rule: try $0.readOptional { try $0.readEnum() },
                    since: try $0.readOptionalInt64()))
        },
        Decoder(.anonymousPurgedV1) { .anonymousPurged(AnonymousPurged(dueAt: try $0.readInt64())) },
        Decoder(.oobCodeIssued) { .oobCodeIssued(try $0.read()) },
        Decoder(.oobCodeConsumed) { _ in .oobCodeConsumed },
        Decoder(.projectConfigChanged) { .projectConfigChanged(try $0.read()) },
        Decoder(.projectConfigChangedV1) { .projectConfigChanged(try ProjectConfigChange(from: &$0, layout: .v1)) },
        Decoder(.projectConfigChangedV2) { .projectConfigChanged(try ProjectConfigChange(from: &$0, layout: .v2)) },
        Decoder(.identityProviderSet) { .identityProviderSet(try $0.read()) },
        Decoder(.identityProviderDeleted) {
            .identityProviderDeleted(IdentityProviderDeleted(providerId: ProviderID(try $0.readString())))
        },
    ]

    /// Positions in `decoders` by the length of their type name: a lookup compares one or two names.
    private static let decodersByNameLength: [[Int]] = {
        var buckets = [[Int]](repeating: [], count: (decoders.map(\.utf8Name.count).max() ?? 0) + 1)
        for (index, decoder) in decoders.enumerated() { buckets[decoder.utf8Name.count].append(index) }
        return buckets
    }()

    /// The decoder for a stored type name (raw UTF-8) and version, matched without allocating.
    public static func decoder(name: UnsafeRawBufferPointer, version: Int) -> Decoder? {
        guard name.count < decodersByNameLength.count, let base = name.baseAddress else { return nil }
        let found = decoders.withUnsafeBufferPointer { decoders in
            decodersByNameLength[name.count].first { index in
                decoders[index].type.version == version
                    && decoders[index].utf8Name.withUnsafeBytes { memcmp($0.baseAddress!, base, name.count) == 0 }
            }
        }
        return found.map { decoders[$0] }
    }

    public static func decode(_ type: EventType, from bytes: UnsafeRawBufferPointer) throws -> EventPayload {
        let name = Array(type.name.utf8)
        guard let decoder = name.withUnsafeBytes({ decoder(name: $0, version: type.version) }) else {
            throw BinaryFormatError.unknownEventType(type.name, version: type.version)
        }
        return try decoder.decode(bytes)
    }
}
