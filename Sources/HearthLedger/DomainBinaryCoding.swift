import HearthDomain

// The stored binary form of the domain's value types. Field order is the format: append new
// fields only through a new event version (with an upcaster), never by editing these in place.

extension PasswordHash: BinaryCodable {
    /// Layouts by event version: events before account.created v2 and account.password_set v2
    /// stored no key, salt separator or input order.
    public enum Layout: Sendable {
        case v1, v2
    }

    public func encode(to writer: inout ByteWriter) {
        writer.write(algorithm.rawValue)
        writer.write(bytes: hash)
        writer.write(bytes: salt)
        writer.write(rounds)
        writer.write(memoryCost)
        writer.write(blockSize)
        writer.write(parallelization)
        writer.write(keyLength)
        writer.write(key) { $0.write(bytes: $1) }
        writer.write(saltSeparator) { $0.write(bytes: $1) }
        writer.write(passwordFirst)
    }

    public init(from reader: inout ByteReader) throws {
        try self.init(from: &reader, layout: .v2)
    }

    public init(from reader: inout ByteReader, layout: Layout) throws {
        self.init(
            algorithm: .init(rawValue: try reader.readString()), hash: try reader.readBytes(), salt: try reader.readBytes(),
            rounds: try reader.readOptionalInt(), memoryCost: try reader.readOptionalInt(),
            blockSize: try reader.readOptionalInt(), parallelization: try reader.readOptionalInt(),
            keyLength: try reader.readOptionalInt())
        guard layout == .v2 else { return }
        key = try reader.readOptional { try $0.readBytes() }
        saltSeparator = try reader.readOptional { try $0.readBytes() }
        passwordFirst = try reader.readBool()
    }
}

extension ProviderLink: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(providerId.rawValue)
        writer.write(federatedId)
        writer.write(email)
        writer.write(displayName)
        writer.write(photoUrl)
        writer.write(screenName)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            providerId: ProviderID(try reader.readString()), federatedId: try reader.readString(),
            email: try reader.readOptionalString(), displayName: try reader.readOptionalString(),
            photoUrl: try reader.readOptionalString(), screenName: try reader.readOptionalString())
    }
}

extension UserID {
    /// Reads a uid, rejecting bytes that are not a valid uid.
    static func read(from reader: inout ByteReader) throws -> UserID {
        let raw = try reader.readString()
        guard let uid = UserID(raw) else { throw BinaryFormatError.invalid("uid", at: reader.offset) }
        return uid
    }
}

extension AccountCreated: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(method.rawValue)
        writer.write(createdAt)
        writer.write(email)
        writer.write(emailVerified)
        writer.write(password) { $0.write($1) }
        writer.write(displayName)
        writer.write(photoUrl)
        writer.write(phoneNumber)
        writer.write(providers) { $0.write($1) }
        writer.write(customClaims)
        writer.write(disabled)
        writer.write(lastSignInAt)
    }

    public init(from reader: inout ByteReader) throws {
        try self.init(from: &reader, passwordLayout: .v2)
    }

    public init(from reader: inout ByteReader, passwordLayout: PasswordHash.Layout) throws {
        self.init(
            method: try reader.readEnum(), createdAt: try reader.readInt64(), email: try reader.readOptionalString(),
            emailVerified: try reader.readBool(),
            password: try reader.readOptional { try PasswordHash(from: &$0, layout: passwordLayout) },
            displayName: try reader.readOptionalString(), photoUrl: try reader.readOptionalString(),
            phoneNumber: try reader.readOptionalString(), providers: try reader.readArray { try $0.read() },
            customClaims: try reader.readOptionalString(), disabled: try reader.readBool(),
            lastSignInAt: try reader.readOptionalInt64())
    }
}

extension ProfileUpdated: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(displayName)
        writer.write(photoUrl)
        writer.write(phoneNumber)
        writer.write(deleted) { $0.write($1.rawValue) }
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            displayName: try reader.readOptionalString(), photoUrl: try reader.readOptionalString(),
            phoneNumber: try reader.readOptionalString(), deleted: try reader.readArray { try $0.readEnum() })
    }
}

extension OOBCodeIssued: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(requestType.rawValue)
        writer.write(email)
        writer.write(uid?.rawValue)
        writer.write(newEmail)
        writer.write(expiresAt)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            requestType: try reader.readEnum(), email: try reader.readString(),
            uid: try reader.readOptional { try UserID.read(from: &$0) }, newEmail: try reader.readOptionalString(),
            expiresAt: try reader.readInt64())
    }
}

extension ProjectConfigChange: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(emailPasswordEnabled)
        writer.write(emailLinkEnabled)
        writer.write(anonymousEnabled)
        writer.write(enabledProviders) { $0.write($1) { $0.write($1.rawValue) } }
        writer.write(authorizedDomains) { $0.write($1) { $0.write($1) } }
        writer.write(linkDomains) { $0.write($1) { $0.write($1) } }
        writer.write(anonymousCleanup)
        writer.write(oneAccountPerEmail)
        writer.write(anonymousCleanupPeriodSeconds)
        writer.write(improvedEmailPrivacy)
        writer.write(iosBundleIds) { $0.write($1) { $0.write($1) } }
        writer.write(androidPackages) { $0.write($1) { $0.write($1) } }
        writer.write(iosApps) { $0.write($1) { $0.write($1) } }
        writer.write(androidApps) { $0.write($1) { $0.write($1) } }
        writer.write(multiFactor) { $0.write($1) }
        writer.write(passwordPolicy) { $0.write($1) }
    }

    public init(from reader: inout ByteReader) throws {
        try self.init(from: &reader, layout: .v4)
    }

    /// Layouts by event version: `project.config_changed` v1 ends after `oneAccountPerEmail`,
    /// v2 after `androidPackages`, v3 after `androidApps`.
    enum Layout: Comparable {
        case v1, v2, v3, v4
    }

    init(from reader: inout ByteReader, layout: Layout) throws {
        let strings: (inout ByteReader) throws -> [String] = { try $0.readArray { try $0.readString() } }
        self.init(
            emailPasswordEnabled: try reader.readOptionalBool(), emailLinkEnabled: try reader.readOptionalBool(),
            anonymousEnabled: try reader.readOptionalBool(),
            enabledProviders: try reader.readOptional(strings)?.map(ProviderID.init(rawValue:)),
            authorizedDomains: try reader.readOptional(strings), linkDomains: try reader.readOptional(strings),
            anonymousCleanup: try reader.readOptionalBool(), oneAccountPerEmail: try reader.readOptionalBool())
        guard layout != .v1 else { return }
        anonymousCleanupPeriodSeconds = try reader.readOptionalInt64()
        improvedEmailPrivacy = try reader.readOptionalBool()
        iosBundleIds = try reader.readOptional(strings)
        androidPackages = try reader.readOptional(strings)
        guard layout >= .v3 else { return }
        iosApps = try reader.readOptional { try $0.readArray { try $0.read() } }
        androidApps = try reader.readOptional { try $0.readArray { try $0.read() } }
        guard layout >= .v4 else { return }
        multiFactor = try reader.readOptional { try $0.read() }
        passwordPolicy = try reader.readOptional { try $0.read() }
    }
}

extension PasswordPolicy: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(enforced)
        writer.write(forceUpgradeOnSignIn)
        writer.write(Int64(minLength))
        writer.write(Int64(maxLength))
        writer.write(requireUppercase)
        writer.write(requireLowercase)
        writer.write(requireNumeric)
        writer.write(requireNonAlphanumeric)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            enforced: try reader.readBool(), forceUpgradeOnSignIn: try reader.readBool(), minLength: Int(try reader.readInt64()),
            maxLength: Int(try reader.readInt64()), requireUppercase: try reader.readBool(), requireLowercase: try reader.readBool(),
            requireNumeric: try reader.readBool(), requireNonAlphanumeric: try reader.readBool())
    }
}

extension MultiFactorConfig: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(state.rawValue)
        writer.write(totpEnabled)
        writer.write(Int64(adjacentIntervals))
    }

    public init(from reader: inout ByteReader) throws {
        self.init(state: try reader.readEnum(), totpEnabled: try reader.readBool(), adjacentIntervals: Int(try reader.readInt64()))
    }
}

extension SecondFactor: BinaryCodable {
    /// The whole factor, as projections keep it (the ledger splits it: `PayloadCodec`).
    public func encode(to writer: inout ByteWriter) {
        writer.write(enrollmentId)
        writer.write(kind.rawValue)
        writer.write(enrolledAt)
        writer.write(lastUsedStep)
        writer.write(displayName)
        writer.write(bytes: sealedSecret)
        writer.write(phoneNumber)
    }

    public init(from reader: inout ByteReader) throws {
        let enrollmentId = try reader.readString()
        let kind: SecondFactor.Kind = try reader.readEnum()
        let enrolledAt = try reader.readInt64()
        let lastUsedStep = try reader.readInt64()
        self.init(
            enrollmentId: enrollmentId, kind: kind, displayName: try reader.readOptionalString(), enrolledAt: enrolledAt,
            sealedSecret: try reader.readBytes(), phoneNumber: try reader.readOptionalString(), lastUsedStep: lastUsedStep)
    }
}

extension IOSApp: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(bundleId)
        writer.write(teamId)
        writer.write(appStoreId)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(bundleId: try reader.readString(), teamId: try reader.readString(), appStoreId: try reader.readOptionalString())
    }
}

extension AndroidApp: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(packageName)
        writer.write(sha256Hashes) { $0.write($1) }
    }

    public init(from reader: inout ByteReader) throws {
        self.init(packageName: try reader.readString(), sha256Hashes: try reader.readArray { try $0.readString() })
    }
}

extension IdentityProviderConfig: BinaryCodable {
    public func encode(to writer: inout ByteWriter) {
        writer.write(providerId.rawValue)
        writer.write(enabled)
        writer.write(clientId)
        writer.write(clientSecret) { writer, secret in
            switch secret {
            case .sealed(let sealed, let fingerprint):
                writer.write("sealed")
                writer.write(bytes: sealed)
                writer.write(fingerprint)
            case .file(let path):
                writer.write("file")
                writer.write(path)
            }
        }
        writer.write(issuer)
        writer.write(displayName)
        writer.write(responseType.idToken)
        writer.write(responseType.code)
        writer.write(additionalClientIds) { $0.write($1) }
    }

    public init(from reader: inout ByteReader) throws {
        let providerId = ProviderID(try reader.readString())
        let enabled = try reader.readBool()
        let clientId = try reader.readString()
        let secret: ClientSecret? = try reader.readOptional { reader in
            switch try reader.readString() {
            case "sealed": return .sealed(sealed: try reader.readBytes(), fingerprint: try reader.readString())
            case "file": return .file(path: try reader.readString())
            case let other: throw BinaryFormatError.invalid("client secret kind '\(other)'", at: reader.offset)
            }
        }
        self.init(
            providerId: providerId, enabled: enabled, clientId: clientId, clientSecret: secret,
            issuer: try reader.readOptionalString(), displayName: try reader.readOptionalString(),
            responseType: ResponseType(idToken: try reader.readBool(), code: try reader.readBool()),
            additionalClientIds: try reader.readArray { try $0.readString() })
    }
}
