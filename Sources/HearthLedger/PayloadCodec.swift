import HearthDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Event payloads to and from their stored bytes. Decoding dispatches on the stored type name
/// and version; an older version is upcast here, on read, and never rewritten in the ledger.
/// A payload is stored in two parts: what stays readable, and the personal fields
/// (`PersonalData.fields`), which the ledger seals under the stream's key.
public enum PayloadCodec {
    public struct Parts: Sendable {
        public var open: [UInt8]
        /// `nil` for a type with no personal fields.
        public var personal: [UInt8]?
    }

    public static func encode(_ payload: EventPayload) -> Parts {
        var open = ByteWriter()
        var personal = ByteWriter()
        let hasPersonal = encode(payload, open: &open, personal: &personal)
        return Parts(open: open.bytes, personal: hasPersonal ? personal.bytes : nil)
    }

    /// Appends the payload's readable part to `writer` and its personal fields to `personal`
    /// (a writer's buffers reused from record to record); returns whether the type has personal
    /// fields.
    public static func encode(_ payload: EventPayload, open writer: inout ByteWriter, personal: inout ByteWriter) -> Bool {
        var hasPersonal = false
        func seal(_ body: (inout ByteWriter) -> Void) {
            body(&personal)
            hasPersonal = true
        }
        switch payload {
        case .accountCreated(let event):
            writer.write(event.method.rawValue)
            writer.write(event.createdAt)
            writer.write(event.emailVerified)
            writer.write(event.disabled)
            writer.write(event.lastSignInAt)
            seal {
                $0.write(event.email)
                $0.write(event.password) { $0.write($1) }
                $0.write(event.displayName)
                $0.write(event.photoUrl)
                $0.write(event.phoneNumber)
                $0.write(event.providers) { $0.write($1) }
                $0.write(event.customClaims)
            }
        case .signInRecorded(let event): writer.write(event.method.rawValue)
        case .providerLinked(let event):
            writer.write(event.provider.providerId.rawValue)
            seal {
                $0.write(event.provider.federatedId)
                $0.write(event.provider.email)
                $0.write(event.provider.displayName)
                $0.write(event.provider.photoUrl)
                $0.write(event.provider.screenName)
            }
        case .providerUnlinked(let event):
            writer.write(event.providerId.rawValue)
            writer.write(event.reason.rawValue)
        case .passwordSet(let event):
            writer.write(event.reason.rawValue)
            seal { $0.write(event.password) }
        case .passwordRemoved(let event): writer.write(event.reason.rawValue)
        case .emailVerified(let event): seal { $0.write(event.email) }
        case .emailChanged(let event):
            writer.write(event.verified)
            seal { $0.write(event.email) }
        case .profileUpdated(let event):
            writer.write(event.deleted) { $0.write($1.rawValue) }
            seal {
                $0.write(event.displayName)
                $0.write(event.photoUrl)
                $0.write(event.phoneNumber)
            }
        case .customClaimsSet(let event): seal { $0.write(event.claims) }
        case .accountDisabled, .accountEnabled, .oobCodeConsumed, .oobCodeExpired: break
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
        case .accountErased(let event): writer.write(event.reason)
        case .secondFactorEnrolled(let factor):
            writer.write(factor.enrollmentId)
            writer.write(factor.kind.rawValue)
            writer.write(factor.enrolledAt)
            writer.write(factor.lastUsedStep)
            seal {
                $0.write(factor.displayName)
                $0.write(bytes: factor.sealedSecret)
                $0.write(factor.phoneNumber)
            }
        case .secondFactorWithdrawn(let event):
            writer.write(event.enrollmentId)
            writer.write(event.by.rawValue)
        case .secondFactorUsed(let event):
            writer.write(event.enrollmentId)
            writer.write(event.step)
        case .oobCodeIssued(let event):
            writer.write(event.requestType.rawValue)
            writer.write(event.uid?.rawValue)
            writer.write(event.expiresAt)
            seal {
                $0.write(event.email)
                $0.write(event.newEmail)
            }
        case .projectConfigChanged(let event): writer.write(event)
        case .identityProviderSet(let event): writer.write(event)
        case .identityProviderDeleted(let event): writer.write(event.providerId.rawValue)
        case .termStarted(let event):
            writer.write(varint: event.term)
            writer.write(event.node)
            writer.write(varint: event.after)
            writer.write(event.afterHash)
        case .signingKeyPublished(let event):
            writer.write(event.keyId)
            writer.write(event.algorithm)
            writer.write(event.replaces)
            writer.write(event.activatesAt)
            writer.write(event.retireAfterSeconds)
        case .signingKeyActivated(let event), .signingKeyWithdrawn(let event): writer.write(event.keyId)
        }
        return hasPersonal
    }

    /// A record's personal part as a decoder gets it: opened, or erased with its key.
    public struct PersonalPart {
        fileprivate var reader: ByteReader?
        public let isErased: Bool

        public static var erased: PersonalPart { PersonalPart(reader: nil, isErased: true) }
        public static func opened(_ bytes: UnsafeRawBufferPointer) -> PersonalPart {
            PersonalPart(reader: ByteReader(bytes), isErased: false)
        }

        /// Reads the fields, unless they are erased (the payload keeps its defaults then).
        mutating func read(_ body: (inout ByteReader) throws -> Void) throws {
            guard var opened = reader else { return }
            try body(&opened)
            reader = opened
        }

        var isAtEnd: Bool { reader?.isAtEnd ?? true }
    }

    /// Reads one stored (type, version) as a current payload. An older version's entry is
    /// where its upcaster goes. A class: a record's decoding passes its decoder along, and a
    /// copy of a struct of a name, bytes and a closure was three retains and releases.
    public final class Decoder: Sendable {
        public let type: EventType
        let utf8Name: [UInt8]
        /// Whether records of this version seal personal fields (an older version's are plain).
        public let sealsPersonalData: Bool
        /// Whether recording it destroys its stream's key (`PersonalData.forgets`).
        public let forgets: Bool
        let read: @Sendable (inout ByteReader, inout PersonalPart) throws -> EventPayload

        init(_ type: EventType, _ read: @escaping @Sendable (inout ByteReader) throws -> EventPayload) {
            self.type = type
            utf8Name = Array(type.name.utf8)
            sealsPersonalData = false
            forgets = PersonalData.forgets(type)
            self.read = { reader, _ in try read(&reader) }
        }

        init(sealing type: EventType, _ read: @escaping @Sendable (inout ByteReader, inout PersonalPart) throws -> EventPayload) {
            self.type = type
            utf8Name = Array(type.name.utf8)
            sealsPersonalData = true
            forgets = PersonalData.forgets(type)
            self.read = read
        }

        /// Decodes a whole payload; trailing bytes are an error. `personal` is the opened
        /// personal part, or `.erased`; ignored by a version that seals nothing.
        public func decode(_ bytes: UnsafeRawBufferPointer, personal: PersonalPart = .erased) throws -> EventPayload {
            var reader = ByteReader(bytes)
            var personal = personal
            let payload = try read(&reader, &personal)
            guard reader.isAtEnd else { throw BinaryFormatError.trailingBytes(reader.remaining) }
            guard personal.isAtEnd else { throw BinaryFormatError.trailingBytes(0) }
            return payload
        }
    }

    /// Every (type, version) the ledger can contain. Unknown types and versions are errors, not
    /// skips: a ledger written by a newer Hearth must not be silently misread.
    public static let decoders: [Decoder] = [
        Decoder(sealing: .accountCreated) { reader, personal in
            var created = AccountCreated(
                method: try reader.readEnum(), createdAt: try reader.readInt64(), emailVerified: try reader.readBool(),
                disabled: try reader.readBool(), lastSignInAt: try reader.readOptionalInt64())
            try personal.read {
                created.email = try $0.readOptionalString()
                created.password = try $0.readOptional { try $0.read() }
                created.displayName = try $0.readOptionalString()
                created.photoUrl = try $0.readOptionalString()
                created.phoneNumber = try $0.readOptionalString()
                created.providers = try $0.readArray { try $0.read() }
                created.customClaims = try $0.readOptionalString()
            }
            return .accountCreated(created)
        },
        Decoder(.accountCreatedV2) { .accountCreated(try $0.read()) },
        Decoder(.accountCreatedV1) { .accountCreated(try AccountCreated(from: &$0, passwordLayout: .v1)) },
        Decoder(.signInRecorded) { .signInRecorded(SignInRecorded(method: SignInMethod(rawValue: try $0.readString()))) },
        Decoder(sealing: .providerLinked) { reader, personal in
            var link = ProviderLink(providerId: ProviderID(try reader.readString()), federatedId: "")
            try personal.read {
                link.federatedId = try $0.readString()
                link.email = try $0.readOptionalString()
                link.displayName = try $0.readOptionalString()
                link.photoUrl = try $0.readOptionalString()
                link.screenName = try $0.readOptionalString()
            }
            return .providerLinked(ProviderLinked(provider: link))
        },
        Decoder(.providerLinkedV1) { .providerLinked(ProviderLinked(provider: try $0.read())) },
        Decoder(.providerUnlinked) {
            .providerUnlinked(ProviderUnlinked(providerId: ProviderID(try $0.readString()), reason: try $0.readEnum()))
        },
        Decoder(.providerUnlinkedV1) { .providerUnlinked(ProviderUnlinked(providerId: ProviderID(try $0.readString()))) },
        Decoder(sealing: .passwordSet) { reader, personal in
            var password = PasswordHash.erased
            try personal.read { password = try $0.read() }
            return .passwordSet(PasswordSet(password: password, reason: try reader.readEnum()))
        },
        Decoder(.passwordSetV2) { .passwordSet(PasswordSet(password: try $0.read(), reason: try $0.readEnum())) },
        Decoder(.passwordSetV1) {
            .passwordSet(PasswordSet(password: try PasswordHash(from: &$0, layout: .v1), reason: try $0.readEnum()))
        },
        Decoder(.passwordRemoved) { .passwordRemoved(PasswordRemoved(reason: try $0.readEnum())) },
        Decoder(sealing: .emailVerified) { _, personal in
            var email = ""
            try personal.read { email = try $0.readString() }
            return .emailVerified(EmailVerified(email: email))
        },
        Decoder(.emailVerifiedV1) { .emailVerified(EmailVerified(email: try $0.readString())) },
        Decoder(sealing: .emailChanged) { reader, personal in
            var email: String?
            try personal.read { email = try $0.readOptionalString() }
            return .emailChanged(EmailChanged(email: email, verified: try reader.readBool()))
        },
        Decoder(.emailChangedV1) { .emailChanged(EmailChanged(email: try $0.readOptionalString(), verified: try $0.readBool())) },
        Decoder(sealing: .profileUpdated) { reader, personal in
            var updated = ProfileUpdated(deleted: try reader.readArray { try $0.readEnum() })
            try personal.read {
                updated.displayName = try $0.readOptionalString()
                updated.photoUrl = try $0.readOptionalString()
                updated.phoneNumber = try $0.readOptionalString()
            }
            return .profileUpdated(updated)
        },
        Decoder(.profileUpdatedV1) { .profileUpdated(try $0.read()) },
        Decoder(sealing: .customClaimsSet) { _, personal in
            var claims: String?
            try personal.read { claims = try $0.readOptionalString() }
            return .customClaimsSet(CustomClaimsSet(claims: claims))
        },
        Decoder(.customClaimsSetV1) { .customClaimsSet(CustomClaimsSet(claims: try $0.readOptionalString())) },
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
        Decoder(.accountErased) { .accountErased(AccountErased(reason: try $0.readString())) },
        Decoder(sealing: .secondFactorEnrolled) { reader, personal in
            let enrollmentId = try reader.readString()
            let kind: SecondFactor.Kind = try reader.readEnum()
            var factor = SecondFactor(
                enrollmentId: enrollmentId, kind: kind, displayName: nil, enrolledAt: try reader.readInt64(), sealedSecret: [],
                lastUsedStep: try reader.readInt64())
            try personal.read {
                factor.displayName = try $0.readOptionalString()
                factor.sealedSecret = try $0.readBytes()
                factor.phoneNumber = try $0.readOptionalString()
            }
            return .secondFactorEnrolled(factor)
        },
        Decoder(.secondFactorWithdrawn) {
            .secondFactorWithdrawn(SecondFactorWithdrawn(enrollmentId: try $0.readString(), by: try $0.readEnum()))
        },
        Decoder(.secondFactorUsed) {
            .secondFactorUsed(SecondFactorUsed(enrollmentId: try $0.readString(), step: try $0.readInt64()))
        },
        Decoder(sealing: .oobCodeIssued) { reader, personal in
            var issued = OOBCodeIssued(
                requestType: try reader.readEnum(), email: "", uid: try reader.readOptional { try UserID.read(from: &$0) },
                expiresAt: try reader.readInt64())
            try personal.read {
                issued.email = try $0.readString()
                issued.newEmail = try $0.readOptionalString()
            }
            return .oobCodeIssued(issued)
        },
        Decoder(.oobCodeIssuedV1) { .oobCodeIssued(try $0.read()) },
        Decoder(.oobCodeConsumed) { _ in .oobCodeConsumed },
        Decoder(.oobCodeExpired) { _ in .oobCodeExpired },
        Decoder(.projectConfigChanged) { .projectConfigChanged(try $0.read()) },
        Decoder(.projectConfigChangedV1) { .projectConfigChanged(try ProjectConfigChange(from: &$0, layout: .v1)) },
        Decoder(.projectConfigChangedV2) { .projectConfigChanged(try ProjectConfigChange(from: &$0, layout: .v2)) },
        Decoder(.projectConfigChangedV3) { .projectConfigChanged(try ProjectConfigChange(from: &$0, layout: .v3)) },
        Decoder(.identityProviderSet) { .identityProviderSet(try $0.read()) },
        Decoder(.identityProviderDeleted) {
            .identityProviderDeleted(IdentityProviderDeleted(providerId: ProviderID(try $0.readString())))
        },
        Decoder(.termStarted) {
            .termStarted(
                TermStarted(
                    term: try $0.readVarint(), node: try $0.readString(), after: try $0.readVarint(), afterHash: try $0.readString()))
        },
        Decoder(.signingKeyPublished) {
            .signingKeyPublished(
                SigningKeyPublished(
                    keyId: try $0.readString(), algorithm: try $0.readString(), replaces: try $0.readString(),
                    activatesAt: try $0.readInt64(), retireAfterSeconds: try $0.readInt64()))
        },
        Decoder(.signingKeyActivated) { .signingKeyActivated(SigningKeyStep(keyId: try $0.readString())) },
        Decoder(.signingKeyWithdrawn) { .signingKeyWithdrawn(SigningKeyStep(keyId: try $0.readString())) },
    ]

    /// Positions in `decoders` by the length of their type name: a lookup compares one or two names.
    private static let decodersByNameLength: [[Int]] = {
        var buckets = [[Int]](repeating: [], count: (decoders.map(\.utf8Name.count).max() ?? 0) + 1)
        for (index, decoder) in decoders.enumerated() { buckets[decoder.utf8Name.count].append(index) }
        return buckets
    }()

    /// The decoder for a stored type name (raw UTF-8) and version, matched without allocating.
    public static func decoder(name: UnsafeRawBufferPointer, version: Int) -> Decoder? {
        decoderIndex(name: name, version: version).map { decoders[$0] }
    }

    /// Where in `decoders` the decoder for a stored type name and version is.
    static func decoderIndex(name: UnsafeRawBufferPointer, version: Int) -> Int? {
        guard name.count < decodersByNameLength.count, let base = name.baseAddress else { return nil }
        return decoders.withUnsafeBufferPointer { decoders in
            decodersByNameLength[name.count].first { index in
                decoders[index].type.version == version
                    && decoders[index].utf8Name.withUnsafeBytes { memcmp($0.baseAddress!, base, name.count) == 0 }
            }
        }
    }

    /// Whether the decoder at each position in `decoders` is for an event that forgets, or one
    /// that starts a term: what a follower's append asks of each record, without copying a decoder.
    static let forgetsByIndex = decoders.map(\.forgets)
    static let startsTermByIndex = decoders.map { $0.type.name == EventType.termStarted.name }

    public static func decoder(for type: EventType) throws -> Decoder {
        let name = Array(type.name.utf8)
        guard let decoder = name.withUnsafeBytes({ decoder(name: $0, version: type.version) }) else {
            throw BinaryFormatError.unknownEventType(type.name, version: type.version)
        }
        return decoder
    }

    /// Decodes a payload of a version that seals nothing, or one's open part with its
    /// personal part (`nil`: erased).
    public static func decode(_ type: EventType, from bytes: UnsafeRawBufferPointer, personal: [UInt8]? = nil) throws
        -> EventPayload
    {
        let decoder = try decoder(for: type)
        guard let personal else { return try decoder.decode(bytes) }
        return try personal.withUnsafeBytes { try decoder.decode(bytes, personal: .opened($0)) }
    }
}

extension PasswordHash {
    /// What an erased password decodes as: no algorithm, no bytes.
    static let erased = PasswordHash(algorithm: "", hash: [], salt: [])
}
