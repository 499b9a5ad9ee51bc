import CoreMetrics
import Crypto
import HearthCrypto
import HearthDomain
import HearthWire

/// Mints and checks Firebase ID tokens and refresh tokens.
///
/// ID tokens carry the claims the SDKs read (firebase-clients-wire.md A.12, emulator 3.1).
/// Refresh tokens are random; the ledger stores only their SHA-256.
public struct TokenIssuer: Sendable {
    /// The keys that sign and verify (one signs; the JWKS publishes more during a rotation).
    public let keyring: SigningKeyring
    /// The key new tokens are signed with; refused (503) while this node holds none the ledger
    /// calls live (a follower that has yet to fetch a rotation's key after the old one was withdrawn).
    public func signingKey() throws -> SigningKey {
        guard let key = keyring.signing else { throw FirebaseError.signingKeyUnavailable }
        return key
    }
    /// ID token lifetime in seconds (Firebase: one hour).
    public let lifetime: Int64
    private let verified = VerifiedTokenCache()
    /// Where RS256 signatures are computed (about 0.2 ms of CPU each), below the event loops'
    /// priority: a saturating sign-up load then leaves the loops free to answer cheap requests
    /// (lookups) at once. ES256 signs inline; it costs less than the hand-over.
    let signingPool: WorkPool?

    public init(key: SigningKey, lifetime: Int64 = 3600, signingPool: WorkPool? = nil) {
        self.init(keyring: SigningKeyring(original: key), lifetime: lifetime, signingPool: signingPool)
    }

    public init(keyring: SigningKeyring, lifetime: Int64 = 3600, signingPool: WorkPool? = nil) {
        self.keyring = keyring
        self.lifetime = lifetime
        self.signingPool = signingPool
    }

    public static func issuer(of project: ProjectID) -> String {
        "https://securetoken.google.com/\(project.rawValue)"
    }

    /// Seconds an ID token's `iat` or `auth_time` may lie ahead of this clock (Firebase's
    /// libraries allow five minutes): tokens from a clock that ran ahead, not from the future.
    public static let allowedClockSkew: Int64 = 300

    /// Seconds verifiers may cache the JWKS (`/.well-known/jwks.json`'s `max-age`): a rotation
    /// publishes a new key at least this long before it signs, by default.
    public static let keySetMaxAge: Int64 = 3600
    /// A session cookie's longest life (`createSessionCookie`'s `validDuration`), in seconds.
    public static let longestSessionCookie: Int64 = 1_209_600

    /// Claims no custom claim may set (Firebase's reserved names).
    public static let reservedClaims: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti",
        "nbf", "nonce", "sub",
    ]

    /// An ID token for `account`, signed in with `method`, issued at `now` (milliseconds).
    /// `signedInAt` (seconds) is the session's sign-in, its `auth_time`; without it, the
    /// account's last sign-in.
    public func idToken(
        for account: Account, in project: ProjectID, method: SignInMethod, now: Int64, signedInAt: Int64? = nil,
        extraClaims: [String: JSONValue] = [:]
    ) async throws -> String {
        let payload = claims(
            for: account, in: project, method: method, now: now, signedInAt: signedInAt, extraClaims: extraClaims)
        let key = try signingKey()
        let input = JWT.signingInput(payload, key)
        let sign: @Sendable () throws -> [UInt8] = {
            let start = ContinuousClock.now
            defer {
                let elapsed = start.duration(to: .now).components
                Timer(label: "hearth_token_signing_duration_seconds", dimensions: [("algorithm", key.algorithm.rawValue)])
                    .recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
            }
            return try key.sign(Array(input.utf8))
        }
        guard let signingPool, key.algorithm == .rs256 else { return JWT.assemble(input, signature: try sign()) }
        do {
            return JWT.assemble(input, signature: try await signingPool.run(sign))
        } catch is WorkPool.Busy {
            throw FirebaseError.bad("TOO_MANY_ATTEMPTS_TRY_LATER : too many tokens are waiting to be signed; try again later")
        }
    }

    /// An ID token's claims (firebase-clients-wire.md A.12).
    func claims(
        for account: Account, in project: ProjectID, method: SignInMethod, now: Int64, signedInAt: Int64?,
        extraClaims: [String: JSONValue]
    ) -> JSONValue {
        let issuedAt = now / 1000
        var claims: [String: JSONValue] = [:]
        claims.reserveCapacity(16 + extraClaims.count)  // grown from empty, it would rehash four times
        if let name = account.displayName { claims["name"] = .string(name) }
        if let picture = account.photoUrl { claims["picture"] = .string(picture) }
        if let text = account.customClaims, let custom = JSONValue.parse(Array(text.utf8))?.objectValue {
            claims.merge(custom) { _, new in new }
        }
        claims.merge(extraClaims) { _, new in new }
        var identities: [String: JSONValue] = [:]
        if let email = account.email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(account.emailVerified)
            identities["email"] = [.string(email)]
        }
        if let phone = account.phoneNumber {
            claims["phone_number"] = .string(phone)
            identities[ProviderID.phone.rawValue] = [.string(phone)]
        }
        for link in account.providers { identities[link.providerId.rawValue] = [.string(link.federatedId)] }
        if method == .anonymous { claims["provider_id"] = .string(SignInMethod.anonymous.rawValue) }
        claims["auth_time"] = .int(signedInAt ?? (account.lastSignInAt ?? account.createdAt) / 1000)
        claims["user_id"] = .string(account.uid.rawValue)
        var firebase: [String: JSONValue] = ["identities": .object(identities), "sign_in_provider": .string(method.tokenProvider)]
        // Only Hearth sets `firebase` among the extra claims ("firebase" is reserved for custom
        // claims): a second factor's, which sit beside the first factor's.
        if let proven = extraClaims["firebase"]?.objectValue {
            for key in [SecondFactorClaims.factorKey, SecondFactorClaims.identifierKey] { firebase[key] = proven[key] }
        }
        claims["firebase"] = .object(firebase)
        claims["iat"] = .int(issuedAt)
        claims["exp"] = .int(issuedAt + lifetime)
        claims["aud"] = .string(project.rawValue)
        claims["iss"] = .string(Self.issuer(of: project))
        claims["sub"] = .string(account.uid.rawValue)
        return .object(claims)
    }

    /// A session cookie (Admin `create_session_cookie`): the ID token's claims, re-issued for
    /// `duration` seconds under the session issuer.
    public func sessionCookie(from token: VerifiedIDToken, in project: ProjectID, duration: Int64, now: Int64) throws
        -> String
    {
        var claims = token.claims
        claims["iat"] = .int(now / 1000)
        claims["exp"] = .int(now / 1000 + duration)
        claims["iss"] = .string("https://session.firebase.google.com/\(project.rawValue)")
        return try JWT.sign(payload: .object(claims), with: try signingKey())
    }

    /// What a valid ID token says about its bearer.
    public struct VerifiedIDToken: Sendable, Equatable {
        public var uid: UserID
        /// Seconds; compared with the account's `validSince`.
        public var issuedAt: Int64
        public var method: SignInMethod
        public var claims: [String: JSONValue]
    }

    /// Checks signature, issuer, audience and expiry. Account state (deleted, disabled,
    /// revoked) is the caller's to check against the projections.
    public func verifyIDToken(_ token: String, project: ProjectID, now: Int64) throws(TokenError) -> VerifiedIDToken {
        // Read before the key is looked up: a withdrawal meanwhile makes this entry stale.
        let withdrawals = keyring.withdrawals
        if let known = verified.entry(for: token), known.project == project, known.withdrawals == keyring.withdrawals {
            guard known.expiresAt > now / 1000 else { throw .expired }
            return known.token
        }
        guard let parts = JWT.decode(token), let key = parts.header["kid"]?.stringValue.flatMap(keyring.key(id:)),
            parts.header["alg"]?.stringValue == key.algorithm.rawValue,
            key.isValidSignature(parts.signature, for: parts.signingInput)
        else { throw .invalid }
        let claims = parts.payload
        guard claims["iss"]?.stringValue == Self.issuer(of: project), claims["aud"]?.stringValue == project.rawValue,
            let sub = claims["sub"]?.stringValue, let uid = UserID(sub),
            case .int(let issuedAt)? = claims["iat"], case .int(let expires)? = claims["exp"]
        else { throw .invalid }
        guard expires > now / 1000 else { throw .expired }
        // Issued, and signed in, no later than now give or take Firebase's clock skew.
        guard case .int(let authTime)? = claims["auth_time"],
            issuedAt <= now / 1000 + Self.allowedClockSkew, authTime <= now / 1000 + Self.allowedClockSkew
        else { throw .invalid }
        let method = claims["firebase"]?["sign_in_provider"]?.stringValue.map(SignInMethod.init(rawValue:)) ?? .custom
        let result = VerifiedIDToken(uid: uid, issuedAt: issuedAt, method: method, claims: claims)
        verified.insert(
            VerifiedTokenCache.Entry(project: project, expiresAt: expires, withdrawals: withdrawals, token: result), for: token)
        return result
    }

    /// A new refresh token, `3.<uid>.<method>.<signedInAt>.<secret>[.<claims>]` in base64url
    /// (the time in decimal seconds). The uid lets a refresh read the account straight away (no
    /// token index to write at sign-in); the sign-in method, the instant the session signed in
    /// (its ID tokens' `auth_time`, which recent-login checks read) and any custom-token claims
    /// ride along so a refresh re-issues them. The recorded hash covers every byte, so none of
    /// them can be altered. The secret is 16 random bytes and a 16-byte tag of them and what
    /// precedes them (`RefreshToken.isIssued(by:)`).
    public static func newRefreshToken(
        for uid: UserID, method: SignInMethod, signedInAt: Int64, claims: [String: JSONValue] = [:], secrets: SecretSealer
    ) throws -> RefreshToken {
        let random = SecureRandom.bytes(16)
        let issued =
            "3." + Base64URL.encode(Array(uid.rawValue.utf8)) + "." + Base64URL.encode(Array(method.rawValue.utf8)) + "."
            + String(signedInAt) + "."
        let tag = try secrets.tag(Array(issued.utf8) + random, for: .refreshToken)
        var text = issued + Base64URL.encode(random + tag.prefix(16))
        if !claims.isEmpty { text += "." + Base64URL.encode(JSONValue.object(claims).encoded()) }
        return RefreshToken(text: text)
    }
}

/// A refresh token as handed to the client.
public struct RefreshToken: Sendable, Equatable {
    public let text: String

    public init(text: String) { self.text = text }

    /// Lowercase hex SHA-256: the only form the ledger and projections hold.
    public var hash: String { sha256Hex(text) }

    /// What the session started with: its account (`nil` in a v1 token, found by its hash), its
    /// sign-in method, when it signed in (seconds; `nil` before v3) and any custom-token claims.
    public struct Session: Sendable, Equatable {
        public var uid: UserID?
        public var method: SignInMethod
        public var signedInAt: Int64?
        public var claims: [String: JSONValue]
    }

    /// Whether a holder of the secrets key issued this token: its secret's second half tags its
    /// first and the fields before it. A refresh may then say more about a token the account
    /// no longer holds (revoked: `TOKEN_EXPIRED`; the account gone: `USER_NOT_FOUND`) than
    /// about a guessed one, which must not tell which uids exist. Tokens issued before tags
    /// (32 random bytes) are not told from guessed ones.
    public func isIssued(by secrets: SecretSealer) -> Bool {
        let bytes = Array(text.utf8)
        let fields = bytes.split(separator: UInt8(ascii: "."), maxSplits: 5, omittingEmptySubsequences: false)
        guard fields.count >= 5, fields[0].elementsEqual("3".utf8), let secret = Base64URL.decode(fields[4]), secret.count == 32 else {
            return false
        }
        let issued = Array(bytes[..<fields[4].startIndex])
        guard let tag = try? secrets.tag(issued + secret.prefix(16), for: .refreshToken) else { return false }
        // In constant time: a comparison that stops at the first difference would time the tag out.
        return zip(tag.prefix(16), secret.suffix(16)).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `nil` when the token is not one of ours: `3.<uid>.<method>.<signedInAt>.<secret>[.<claims>]`,
    /// or from earlier versions `2.<uid>.<method>.<secret>[.<claims>]` and
    /// `1.<method>.<secret>[.<claims>]`.
    public var session: Session? {
        // Bytes, not Characters: a refresh parses one of these on every call.
        var parts = Array(text.utf8).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)[...]
        guard let version = parts.popFirst(), version.count == 1, let digit = version.first,
            (UInt8(ascii: "1")...UInt8(ascii: "3")).contains(digit)
        else { return nil }
        var uid: UserID?
        if digit != UInt8(ascii: "1") {
            guard let bytes = parts.popFirst().flatMap({ Base64URL.decode($0) }), let text = String(validating: bytes, as: UTF8.self),
                let named = UserID(text)
            else { return nil }
            uid = named
        }
        guard let bytes = parts.popFirst().flatMap({ Base64URL.decode($0) }), !bytes.isEmpty,
            let method = String(validating: bytes, as: UTF8.self).map(SignInMethod.init(rawValue:))
        else { return nil }
        var signedInAt: Int64?
        if digit == UInt8(ascii: "3") {
            guard let field = parts.popFirst(), !field.isEmpty, field.count <= 18,
                field.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            signedInAt = field.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
        }
        guard let secret = parts.popFirst().flatMap({ Base64URL.decode($0) }), secret.count == 32, parts.count <= 1 else {
            return nil
        }
        guard let encoded = parts.popFirst() else { return Session(uid: uid, method: method, signedInAt: signedInAt, claims: [:]) }
        guard let json = Base64URL.decode(encoded), let claims = JSONValue.parse(json)?.objectValue else { return nil }
        return Session(uid: uid, method: method, signedInAt: signedInAt, claims: claims)
    }
}

public enum TokenError: Error, Equatable {
    case invalid
    case expired
}

/// Lowercase hex SHA-256 of a secret's text: how refresh tokens and action codes are recorded.
func sha256Hex(_ text: String) -> String {
    let hexDigits = Array("0123456789abcdef".utf8)
    var hex: [UInt8] = []
    hex.reserveCapacity(64)
    for byte in SHA256.hash(data: Array(text.utf8)) {
        hex.append(hexDigits[Int(byte >> 4)])
        hex.append(hexDigits[Int(byte & 15)])
    }
    return String(decoding: hex, as: UTF8.self)
}
