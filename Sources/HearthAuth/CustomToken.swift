import HearthDomain
import HearthWire

/// What an app's backend vouches for in a custom token: the uid and claims for the ID token.
public struct CustomToken: Sendable, Equatable {
    public var uid: UserID
    /// Developer claims; they become top-level ID token claims and survive refreshes.
    public var claims: [String: JSONValue]
}

/// Reads `signInWithCustomToken` tokens (firebase-auth-emulator-api.md 2.12).
///
/// Development without keys follows the Auth Emulator: unsigned JWTs (what the Admin SDKs
/// mint in emulator mode) or plain JSON, never expiring. With keys, or in production, a token
/// must be signed by a configured key, addressed to the Identity Toolkit and current.
public struct CustomTokenVerifier: Sendable {
    public static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    /// Firebase's limit on a custom token's lifetime.
    static let maxLifetimeSeconds: Int64 = 3600

    /// The backend's public keys (its service account's, or an EC key) that may sign tokens.
    public var keys: [VerificationKey]
    /// Emulator rules: tokens need no signature and never expire.
    public var acceptsUnsigned: Bool

    public init(keys: [VerificationKey] = [], acceptsUnsigned: Bool) {
        self.keys = keys
        self.acceptsUnsigned = acceptsUnsigned
    }

    public func verify(_ token: String?, now: Int64) throws -> CustomToken {
        guard let token, !token.isEmpty else { throw FirebaseError.bad("MISSING_CUSTOM_TOKEN") }
        if token.hasPrefix("{") {
            guard acceptsUnsigned else { throw invalid("Invalid assertion format") }
            guard let payload = JSONValue.parse(Array(token.utf8))?.objectValue else {
                throw invalid("((Auth Emulator only accepts strict JSON or JWTs as fake custom tokens.))")
            }
            return try contents(of: payload)
        }
        guard let parts = JWT.decode(token) else { throw invalid("Invalid assertion format") }
        let audience = parts.payload["aud"]?.stringValue ?? ""
        guard audience == Self.audience else {
            throw invalid(
                "((Invalid aud (audience): \(audience) Note: Firebase ID Tokens / third-party tokens cannot be used with signInWithCustomToken.))"
            )
        }
        let unsignedAllowed = acceptsUnsigned && (keys.isEmpty || parts.header["alg"]?.stringValue == "none")
        if !unsignedAllowed { try checkSignatureAndLifetime(parts, now: now) }
        return try contents(of: parts.payload)
    }

    private func checkSignatureAndLifetime(_ parts: JWT.Parts, now: Int64) throws {
        let algorithm = parts.header["alg"]?.stringValue
        guard keys.contains(where: { $0.isValidSignature(parts.signature, for: parts.signingInput, algorithm: algorithm) }) else {
            throw invalid(keys.isEmpty ? "custom tokens are not accepted: no customTokenKeys are configured" : "invalid signature")
        }
        guard case .int(let issuedAt)? = parts.payload["iat"], case .int(let expires)? = parts.payload["exp"],
            expires > issuedAt, case (let lifetime, let overflow) = expires.subtractingReportingOverflow(issuedAt), !overflow,
            lifetime <= Self.maxLifetimeSeconds
        else { throw invalid("iat and exp must span at most one hour") }
        let seconds = now / 1000
        guard issuedAt <= seconds + TokenIssuer.allowedClockSkew else { throw invalid("issued in the future") }
        guard seconds < expires else { throw invalid("token expired") }
    }

    private func contents(of payload: [String: JSONValue]) throws -> CustomToken {
        let uidText: String? =
            switch payload["uid"] ?? payload["user_id"] {
            case .string(let text)?: text
            case .int(let number)?: String(number)
            case .double(let number)?: String(number)
            case .bool(let flag)?: String(flag)
            default: nil
            }
        guard let uidText, !uidText.isEmpty else { throw FirebaseError.bad("MISSING_IDENTIFIER") }
        guard uidText.count <= 128, let uid = UserID(uidText) else { throw invalid("uid must be 1 to 128 characters") }
        var claims: [String: JSONValue] = [:]
        switch payload["claims"] {
        case nil, .null?: break
        case .object(let object)?: claims = object
        default: throw FirebaseError.bad("INVALID_CLAIMS")
        }
        try Validation.rejectReservedClaims(claims)
        return CustomToken(uid: uid, claims: claims)
    }

    private func invalid(_ reason: String) -> FirebaseError {
        FirebaseError.bad("INVALID_CUSTOM_TOKEN : \(reason)")
    }
}
