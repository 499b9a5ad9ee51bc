import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// `/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:{start,finalize,withdraw}` and
/// `mfaSignIn:{start,finalize}`, with TOTP as the second factor (firebase-js-sdk's
/// `startEnrollTotpMfa`, `finalizeEnrollTotpMfa`, `withdrawMfa`, `finalizeSignInTotpMfa`; the
/// iOS SDK sends the same fields).
struct MultiFactorEndpoints: Sendable {
    let secondFactors: SecondFactorService

    /// The operations as `IdentityToolkitAPI` dispatches them (`v2/` keeps them off the v1 paths).
    static let startEnrolment = "v2/mfaEnrollment:start"
    static let finalizeEnrolment = "v2/mfaEnrollment:finalize"
    static let withdraw = "v2/mfaEnrollment:withdraw"
    static let startSignIn = "v2/mfaSignIn:start"
    static let finalizeSignIn = "v2/mfaSignIn:finalize"
    static let operations: Set<String> = [startEnrolment, finalizeEnrolment, withdraw, startSignIn, finalizeSignIn]

    /// Phone (SMS) second factors: Hearth sends no SMS.
    static let smsNotEnabled = FirebaseError.bad("OPERATION_NOT_ALLOWED : SMS based MFA not enabled.")

    func startEnrolment(_ call: ToolkitCall) throws -> JSONValue {
        let fields = call.fields
        guard fields.has("totpEnrollmentInfo") else {
            if fields.has("phoneEnrollmentInfo") { throw Self.smsNotEnabled }
            throw FirebaseError.bad("INVALID_ARGUMENT : ((Missing totpEnrollmentInfo.))")
        }
        _ = try fields.object("totpEnrollmentInfo")
        let enrolment = try secondFactors.startTOTPEnrolment(idToken: try fields.string("idToken"), call.caller)
        return [
            "totpSessionInfo": [
                "sharedSecretKey": .string(enrolment.sharedSecretKey),
                "verificationCodeLength": .int(Int64(enrolment.verificationCodeLength)),
                "hashingAlgorithm": .string(enrolment.hashingAlgorithm), "periodSec": .int(enrolment.periodSec),
                "sessionInfo": .string(enrolment.sessionInfo),
                "finalizeEnrollmentTime": .string(Timestamp.iso8601(milliseconds: enrolment.finalizeEnrollmentTime)),
            ]
        ]
    }

    func finalizeEnrolment(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        guard let verification = try fields.object("totpVerificationInfo") else {
            if fields.has("phoneVerificationInfo") { throw Self.smsNotEnabled }
            throw FirebaseError.bad("INVALID_ARGUMENT : ((Missing totpVerificationInfo.))")
        }
        let result = try await secondFactors.finalizeTOTPEnrolment(
            idToken: try fields.string("idToken"), sessionInfo: try verification.string("sessionInfo"),
            code: try verification.string("verificationCode"), displayName: try fields.string("displayName"), call.caller)
        var body = Self.tokens(result)
        body["totpAuthInfo"] = .object([:])
        return .object(body)
    }

    func withdraw(_ call: ToolkitCall) async throws -> JSONValue {
        let result = try await secondFactors.withdraw(
            idToken: try call.fields.string("idToken"), enrollmentId: try call.fields.string("mfaEnrollmentId"), call.caller)
        return .object(Self.tokens(result))
    }

    /// TOTP needs no start (the code is in the user's app): only SMS factors start a sign-in.
    func startSignIn(_ call: ToolkitCall) throws -> JSONValue {
        guard try call.fields.string("mfaPendingCredential")?.isEmpty == false else {
            throw FirebaseError.bad("MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.")
        }
        throw Self.smsNotEnabled
    }

    func finalizeSignIn(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        guard let verification = try fields.object("totpVerificationInfo") else {
            if fields.has("phoneVerificationInfo") { throw Self.smsNotEnabled }
            throw FirebaseError.bad("INVALID_ARGUMENT : MFA provider not supported!")
        }
        let result = try await secondFactors.finalizeTOTPSignIn(
            pendingCredential: try fields.string("mfaPendingCredential"), enrollmentId: try fields.string("mfaEnrollmentId"),
            code: try verification.string("verificationCode"), call.caller)
        return .object(Self.tokens(result))
    }

    /// `FinalizeMfaResponse`: the tokens, and `expiresIn` as every sign-in answers it.
    private static func tokens(_ result: SignInResult) -> [String: JSONValue] {
        var body = UserRecord.tokens(result.tokens)
        body["localId"] = .string(result.account.uid.rawValue)
        return body
    }

    /// A sign-in that stopped at a second factor, as Firebase answers it: no tokens, the
    /// pending credential and the account's factors (`mfaInfo`) that can complete it here.
    static func challenge(_ required: SecondFactorRequired) -> [String: JSONValue] {
        var body: [String: JSONValue] = [
            "localId": .string(required.account.uid.rawValue),
            "mfaPendingCredential": .string(required.pendingCredential),
            "mfaInfo": .array(required.account.secondFactors.filter(\.isUsable).map(UserRecord.mfaInfo)),
        ]
        if let email = required.account.email { body["email"] = .string(email) }
        return body
    }
}
