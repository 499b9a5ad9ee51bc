import HearthDomain
import HearthLedger

// Binary forms of projection records. Unlike events these may change freely between
// releases: bump `Projections.formatVersion` and the daemon rebuilds them from the ledger.

extension Account: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(uid.rawValue)
        writer.write(email)
        writer.write(emailVerified)
        writer.write(password) { $0.write($1) }
        writer.write(passwordUpdatedAt)
        writer.write(displayName)
        writer.write(photoUrl)
        writer.write(phoneNumber)
        writer.write(providers) { $0.write($1) }
        writer.write(customClaims)
        writer.write(disabled)
        writer.write(isAnonymous)
        writer.write(emailLinkSignIn)
        writer.write(customAuth)
        writer.write(createdAt)
        writer.write(lastSignInAt)
        writer.write(validSince)
        writer.write(refreshTokens) { $0.write($1) }
        writer.write(initialEmail)
        writer.write(secondFactors) { $0.write($1) }
    }

    public init(from reader: inout ByteReader) throws {
        let raw = try reader.readString()
        guard let uid = UserID(raw) else { throw BinaryFormatError.invalid("uid", at: 0) }
        let email = try reader.readOptionalString()
        let emailVerified = try reader.readBool()
        let password: PasswordHash? = try reader.readOptional { try $0.read() }
        let passwordUpdatedAt = try reader.readOptionalInt64()
        let displayName = try reader.readOptionalString()
        let photoUrl = try reader.readOptionalString()
        let phoneNumber = try reader.readOptionalString()
        let providers: [ProviderLink] = try reader.readArray { try $0.read() }
        let customClaims = try reader.readOptionalString()
        let disabled = try reader.readBool()
        let isAnonymous = try reader.readBool()
        let emailLinkSignIn = try reader.readBool()
        let customAuth = try reader.readBool()
        let createdAt = try reader.readInt64()
        self.init(uid: uid, createdAt: createdAt)
        self.email = email
        self.emailVerified = emailVerified
        self.password = password
        self.passwordUpdatedAt = passwordUpdatedAt
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.providers = providers
        self.customClaims = customClaims
        self.disabled = disabled
        self.isAnonymous = isAnonymous
        self.emailLinkSignIn = emailLinkSignIn
        self.customAuth = customAuth
        lastSignInAt = try reader.readOptionalInt64()
        validSince = try reader.readInt64()
        refreshTokens = try reader.readArray { try $0.readString() }
        initialEmail = try reader.readOptionalString()
        secondFactors = try reader.readArray { try $0.read() }
    }
}

extension ProjectConfig: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(emailPasswordEnabled)
        writer.write(emailLinkEnabled)
        writer.write(anonymousEnabled)
        writer.write(enabledProviders) { $0.write($1) { $0.write($1.rawValue) } }
        writer.write(authorizedDomains) { $0.write($1) }
        writer.write(linkDomains) { $0.write($1) }
        writer.write(anonymousCleanup)
        writer.write(oneAccountPerEmail)
        writer.write(anonymousCleanupPeriodSeconds)
        writer.write(improvedEmailPrivacy)
        writer.write(iosBundleIds) { $0.write($1) }
        writer.write(androidPackages) { $0.write($1) }
        writer.write(identityProviders) { $0.write($1) }
        writer.write(iosApps) { $0.write($1) }
        writer.write(androidApps) { $0.write($1) }
        writer.write(multiFactor)
        writer.write(passwordPolicy)
    }

    public init(from reader: inout ByteReader) throws {
        self.init()
        emailPasswordEnabled = try reader.readBool()
        emailLinkEnabled = try reader.readBool()
        anonymousEnabled = try reader.readBool()
        enabledProviders = try reader.readOptional { try $0.readArray { ProviderID(try $0.readString()) } }
        authorizedDomains = try reader.readArray { try $0.readString() }
        linkDomains = try reader.readArray { try $0.readString() }
        anonymousCleanup = try reader.readBool()
        oneAccountPerEmail = try reader.readBool()
        anonymousCleanupPeriodSeconds = try reader.readInt64()
        improvedEmailPrivacy = try reader.readBool()
        iosBundleIds = try reader.readArray { try $0.readString() }
        androidPackages = try reader.readArray { try $0.readString() }
        identityProviders = try reader.readArray { try $0.read() }
        iosApps = try reader.readArray { try $0.read() }
        androidApps = try reader.readArray { try $0.read() }
        multiFactor = try reader.read()
        passwordPolicy = try reader.read()
    }
}

extension CleanupSchedule: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(dueAt)
        writer.write(rule.rawValue)
        writer.write(since)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(dueAt: try reader.readInt64(), rule: try reader.readEnum(), since: try reader.readInt64())
    }
}

extension OOBCode: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(OOBCodeIssued(requestType: requestType, email: email, uid: uid, newEmail: newEmail, expiresAt: expiresAt))
        writer.write(issuedAt)
        writer.write(consumed)
    }

    public init(from reader: inout ByteReader) throws {
        let issued: OOBCodeIssued = try reader.read()
        self.init(issued, issuedAt: try reader.readInt64())
        consumed = try reader.readBool()
    }
}

/// A live refresh token: whose it is and when its session started (for `auth_time`).
public struct RefreshTokenRecord: Equatable, Sendable, BinaryCodable {
    public var project: ProjectID
    public var uid: UserID
    public var issuedAt: Int64

    public init(project: ProjectID, uid: UserID, issuedAt: Int64) {
        self.project = project
        self.uid = uid
        self.issuedAt = issuedAt
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(project.rawValue)
        writer.write(uid.rawValue)
        writer.write(issuedAt)
    }

    public init(from reader: inout ByteReader) throws {
        guard let project = ProjectID(try reader.readString()), let uid = UserID(try reader.readString()) else {
            throw BinaryFormatError.invalid("refresh token owner", at: reader.offset)
        }
        self.init(project: project, uid: uid, issuedAt: try reader.readInt64())
    }
}
