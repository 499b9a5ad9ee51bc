import HearthAuth
import HearthDomain
import HearthWire

/// An imported user's `mfaInfo` (batchCreate, `hearth users import`): Firebase's SMS factors
/// (`phoneInfo`), recorded so that the account is not silently left on one factor, and TOTP
/// factors (`totpInfo`), with their secret when they come from a Hearth export
/// (`totpInfo.sharedSecretKey`, base32), which keep working.
enum ImportedSecondFactors {
    static func parse(_ entries: [RequestFields], sealer: SecretSealer, now: Int64) throws -> [SecondFactor] {
        try entries.map { entry in
            let id = try entry.string("mfaEnrollmentId") ?? AuthContext.randomID()
            guard !id.isEmpty, id.utf8.count <= 128 else {
                throw FirebaseError.bad("INVALID_MFA_ENROLLMENT_ID : mfaEnrollmentId must be 1 to 128 bytes.")
            }
            let name = try entry.string("displayName")
            if let name, name.utf8.count > SecondFactorRules.maxDisplayNameBytes {
                throw FirebaseError.bad("INVALID_DISPLAY_NAME : A second factor's display name is longer than 256 bytes.")
            }
            var factor = SecondFactor(
                enrollmentId: id, displayName: name, enrolledAt: try enrolledAt(entry, now: now), sealedSecret: [], lastUsedStep: 0)
            switch (try entry.string("phoneInfo"), try entry.object("totpInfo")) {
            case (let phone?, nil):
                guard let valid = try? Validation.phoneNumber(phone) else {
                    throw FirebaseError.bad("INVALID_MFA_PHONE_NUMBER : Invalid format.")
                }
                factor.kind = .phone
                factor.phoneNumber = valid
            case (nil, let totp?):
                if let text = try totp.string("sharedSecretKey") {
                    guard let secret = Base32.decode(text), (10...64).contains(secret.count) else {
                        throw FirebaseError.bad("INVALID_ARGUMENT : totpInfo.sharedSecretKey must be 10 to 64 bytes in base32.")
                    }
                    factor.sealedSecret = try sealer.seal(secret, for: .totpSecret)
                    factor.lastUsedStep = max(0, try totp.int("lastUsedStep") ?? 0)
                }
            default:
                throw FirebaseError.bad("INVALID_ARGUMENT : Each mfaInfo entry needs phoneInfo or totpInfo.")
            }
            return factor
        }
    }

    /// RFC 3339 (as the Admin SDKs send it) or Unix milliseconds; the import's instant if absent.
    private static func enrolledAt(_ entry: RequestFields, now: Int64) throws -> Int64 {
        guard entry.has("enrolledAt") else { return now }
        let parsed: Int64? =
            if let text = try? entry.string("enrolledAt"), let time = Timestamp.parse(text) { time } else { try? entry.int("enrolledAt") }
        guard let parsed, (0...now + TokenIssuer.allowedClockSkew * 1000).contains(parsed) else {
            throw FirebaseError.bad("INVALID_ARGUMENT : enrolledAt must be a time (RFC 3339), not in the future.")
        }
        return parsed
    }
}
