import Foundation
import HearthAuth
import HearthDomain
import HearthWire

/// An account as the wire's user record (emulator 2.9; firebase-clients-wire.md A.3, B.2):
/// only set fields appear; times in milliseconds as strings, `validSince` in seconds.
package enum UserRecord {
    /// What a record says of a password: the hash itself only where accounts are exported to
    /// an admin (batchGet, admin lookup, query); everywhere else Firebase's placeholder, which
    /// still tells the SDKs the account has a password (a hash is enough to crack it offline).
    package enum PasswordHashes {
        case exported, redacted
    }

    /// base64("REDACTED"): what Firebase shows end users, and what the Admin SDKs read as no hash.
    package static let redactedHash: JSONValue = "UkVEQUNURUQ="

    package static func json(_ account: Account, _ hashes: PasswordHashes) -> JSONValue {
        var record: [String: JSONValue] = [
            "localId": .string(account.uid.rawValue),
            "createdAt": .string(String(account.createdAt)),
            "validSince": .string(String(account.validSince)),
            "disabled": .bool(account.disabled),
            "providerUserInfo": .array(providerUserInfo(account)),
        ]
        if let email = account.email {
            record["email"] = .string(email)
            record["emailVerified"] = .bool(account.emailVerified)
        }
        if let initial = account.initialEmail { record["initialEmail"] = .string(initial) }
        if let name = account.displayName { record["displayName"] = .string(name) }
        if let photo = account.photoUrl { record["photoUrl"] = .string(photo) }
        if let phone = account.phoneNumber { record["phoneNumber"] = .string(phone) }
        if let password = account.password {
            // Admin exports carry the hash and salt (B.2); iOS only needs it non-empty.
            switch hashes {
            case .exported:
                record["passwordHash"] = .string(Data(password.hash).base64EncodedString())
                record["salt"] = .string(Data(password.salt).base64EncodedString())
            case .redacted:
                record["passwordHash"] = redactedHash
            }
        }
        if let updated = account.passwordUpdatedAt { record["passwordUpdatedAt"] = .int(updated) }
        if let lastSignIn = account.lastSignInAt, lastSignIn > 0 {
            record["lastLoginAt"] = .string(String(lastSignIn))
            // RFC 3339 (B.2). The last session's issue: refreshes are reads, so they don't move it.
            record["lastRefreshAt"] = .string(Timestamp.iso8601(milliseconds: lastSignIn))
        }
        if let claims = account.customClaims { record["customAttributes"] = .string(claims) }
        if account.emailLinkSignIn { record["emailLinkSignin"] = true }
        if account.customAuth { record["customAuth"] = true }
        if !account.secondFactors.isEmpty { record["mfaInfo"] = .array(account.secondFactors.map(mfaInfo)) }
        return .object(record)
    }

    /// A second factor as `mfaInfo` lists it: the SDKs tell a TOTP factor by its `totpInfo`
    /// (an empty object), an SMS one by its `phoneInfo`; `enrolledAt` in RFC 3339 with
    /// milliseconds, which iOS requires.
    package static func mfaInfo(_ factor: SecondFactor) -> JSONValue {
        var entry: [String: JSONValue] = [
            "mfaEnrollmentId": .string(factor.enrollmentId),
            "enrolledAt": .string(Timestamp.iso8601(milliseconds: factor.enrolledAt)),
        ]
        if let name = factor.displayName { entry["displayName"] = .string(name) }
        switch factor.kind {
        case .totp: entry["totpInfo"] = .object([:])
        case .phone: entry["phoneInfo"] = .string(factor.phoneNumber ?? "")
        }
        return .object(entry)
    }

    /// `password` (email with a password or email link), `phone`, then federated providers;
    /// each with `providerId`, `rawId` and `federatedId` (iOS needs the last, Admin the second).
    package static func providerUserInfo(_ account: Account) -> [JSONValue] {
        var entries: [JSONValue] = []
        if let email = account.email, account.password != nil || account.emailLinkSignIn {
            var entry: [String: JSONValue] = [
                "providerId": .string(ProviderID.password.rawValue), "email": .string(email), "rawId": .string(email),
                "federatedId": .string(email),
            ]
            if let name = account.displayName { entry["displayName"] = .string(name) }
            if let photo = account.photoUrl { entry["photoUrl"] = .string(photo) }
            entries.append(.object(entry))
        }
        if let phone = account.phoneNumber {
            entries.append([
                "providerId": .string(ProviderID.phone.rawValue), "phoneNumber": .string(phone), "rawId": .string(phone),
                "federatedId": .string(phone),
            ])
        }
        for link in account.providers {
            var entry: [String: JSONValue] = [
                "providerId": .string(link.providerId.rawValue), "rawId": .string(link.federatedId),
                "federatedId": .string(link.federatedId),
            ]
            if let email = link.email { entry["email"] = .string(email) }
            if let name = link.displayName { entry["displayName"] = .string(name) }
            if let photo = link.photoUrl { entry["photoUrl"] = .string(photo) }
            if let screenName = link.screenName { entry["screenName"] = .string(screenName) }
            entries.append(.object(entry))
        }
        return entries
    }

    /// The fields every sign-in answer shares: tokens, `expiresIn` as a string (iOS needs it).
    package static func tokens(_ tokens: IssuedTokens) -> [String: JSONValue] {
        [
            "idToken": .string(tokens.idToken), "refreshToken": .string(tokens.refreshToken),
            "expiresIn": .string(String(tokens.expiresIn)),
        ]
    }
}
