import HearthDomain
import HearthWire

/// A sign-in whose first factor passed and whose second is awaited (`mfaPendingCredential`):
/// sealed for Hearth alone, so a client can neither read nor alter it, and any node of a cluster
/// (sharing the secrets key) can complete it. Short-lived and spent by the sign-in it completes
/// (`SecondFactorRules.checkPending`).
struct PendingCredential: Equatable, Sendable {
    var project: ProjectID
    var uid: UserID
    /// The first factor's method: the completed session's `sign_in_provider`.
    var method: SignInMethod
    /// The instant the first factor was recorded (ms).
    var issuedAt: Int64
    /// A custom token's claims, which the completed session's tokens carry.
    var claims: [String: JSONValue]

    func sealed(by secrets: SecretSealer) throws -> String {
        let body: JSONValue = [
            "p": .string(project.rawValue), "u": .string(uid.rawValue), "m": .string(method.rawValue),
            "t": .int(issuedAt), "c": .object(claims),
        ]
        return Base64URL.encode(try secrets.seal(body.encoded(), for: .pendingCredential))
    }

    /// `nil` for anything that is not a credential Hearth sealed.
    static func opened(_ text: String, by secrets: SecretSealer) throws -> PendingCredential? {
        guard text.utf8.count <= SecondFactorTickets.maxLength, let sealed = Base64URL.decode(text),
            let bytes = try secrets.open(sealed, for: .pendingCredential), let body = JSONValue.parse(bytes),
            let project = body["p"]?.stringValue.flatMap(ProjectID.init), let uid = body["u"]?.stringValue.flatMap(UserID.init),
            let method = body["m"]?.stringValue, case .int(let issuedAt)? = body["t"], let claims = body["c"]?.objectValue
        else { return nil }
        return PendingCredential(project: project, uid: uid, method: SignInMethod(rawValue: method), issuedAt: issuedAt, claims: claims)
    }
}

/// A TOTP enrolment between `mfaEnrollment:start` and `:finalize` (`totpSessionInfo.sessionInfo`):
/// the secret the user's app was given, sealed, so nothing is kept for an enrolment that is
/// never finished.
struct EnrolmentSession: Equatable, Sendable {
    var project: ProjectID
    var uid: UserID
    var enrollmentId: String
    var secret: [UInt8]
    /// Unix milliseconds: `finalizeEnrollmentTime`.
    var expiresAt: Int64

    func sealed(by secrets: SecretSealer) throws -> String {
        let body: JSONValue = [
            "p": .string(project.rawValue), "u": .string(uid.rawValue), "e": .string(enrollmentId),
            "s": .string(Base64URL.encode(secret)), "x": .int(expiresAt),
        ]
        return Base64URL.encode(try secrets.seal(body.encoded(), for: .enrolmentSession))
    }

    static func opened(_ text: String, by secrets: SecretSealer) throws -> EnrolmentSession? {
        guard text.utf8.count <= SecondFactorTickets.maxLength, let sealed = Base64URL.decode(text),
            let bytes = try secrets.open(sealed, for: .enrolmentSession), let body = JSONValue.parse(bytes),
            let project = body["p"]?.stringValue.flatMap(ProjectID.init), let uid = body["u"]?.stringValue.flatMap(UserID.init),
            let enrollmentId = body["e"]?.stringValue, let secret = body["s"]?.stringValue.flatMap({ Base64URL.decode($0) }),
            case .int(let expiresAt)? = body["x"]
        else { return nil }
        return EnrolmentSession(project: project, uid: uid, enrollmentId: enrollmentId, secret: secret, expiresAt: expiresAt)
    }
}

enum SecondFactorTickets {
    /// The longest ticket text opened (a custom token's claims are at most 1,000 bytes).
    static let maxLength = 8192
}
