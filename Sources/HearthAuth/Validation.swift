import Foundation
import HearthDomain
import HearthWire

/// Input rules shared by the flows, in the emulator's words.
public enum Validation {
    /// Longest accepted profile text, in UTF-8 bytes. Profile fields land in the ledger and in
    /// every ID token (`name`, `picture`); provider ids and federated ids are parts of index
    /// keys, which LMDB limits to 511 bytes.
    public enum MaxBytes {
        public static let displayName = 1024
        public static let photoUrl = 2048
        public static let screenName = 256
        public static let email = 320
        public static let providerId = 128
        public static let federatedId = 256
    }

    /// `value` if it is at most `maxBytes` long.
    public static func text(_ value: String?, _ field: String, maxBytes: Int) throws -> String? {
        guard let value else { return nil }
        guard value.utf8.count <= maxBytes else { throw FirebaseError.invalidArgument("/\(field) is longer than \(maxBytes) bytes") }
        return value
    }

    /// Lowercased; `local@domain` with exactly one '@', as the emulator checks.
    public static func email(_ email: String?) throws -> String {
        guard let email, !email.isEmpty else { throw FirebaseError.missingEmail }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, email.utf8.count <= MaxBytes.email,
            email.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7f })
        else {
            throw FirebaseError.invalidEmail
        }
        return normalizeEmail(email)
    }

    /// A continue URL (ActionCodeSettings' `continueUrl`, createAuthUri's `continueUri`): where a
    /// browser is sent afterwards, so only an absolute `http` or `https` URL with a host; any other
    /// scheme (`javascript:`, `data:`) would run in the page that redirects to it.
    public static func continueURL(_ text: String) throws -> URLComponents {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw FirebaseError.bad("INVALID_CONTINUE_URI : The continue URL must be an absolute http or https URL.")
        }
        return url
    }

    public static func password(_ password: String?) throws -> String {
        guard let password, !password.isEmpty else { throw FirebaseError.missingPassword }
        guard password.count >= PasswordHasher.minimumPasswordLength else { throw FirebaseError.weakPassword }
        // scrypt takes any length, but a megabyte "password" is an attack on the hash pool.
        guard password.utf8.count <= 4096 else { throw FirebaseError.bad("INVALID_PASSWORD : Password is too long") }
        return password
    }

    /// Custom claims: a JSON object of at most 1000 bytes without reserved names.
    public static func customClaims(_ text: String) throws -> String? {
        guard text.utf8.count <= 1000 else { throw FirebaseError.bad("CLAIMS_TOO_LARGE") }
        guard let object = JSONValue.parse(Array(text.utf8))?.objectValue else { throw FirebaseError.bad("INVALID_CLAIMS") }
        try rejectReservedClaims(object)
        return object.isEmpty ? nil : JSONValue.object(object).text
    }

    /// Developer claims (custom attributes, custom tokens) may not name a claim Firebase sets.
    public static func rejectReservedClaims(_ claims: [String: JSONValue]) throws {
        if let reserved = claims.keys.sorted().first(where: TokenIssuer.reservedClaims.contains) {
            throw FirebaseError.bad("FORBIDDEN_CLAIM : \(reserved)")
        }
    }

    public static func phoneNumber(_ phone: String) throws -> String {
        let digits = phone.dropFirst()
        guard phone.first == "+", (4...20).contains(digits.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw FirebaseError.bad("INVALID_PHONE_NUMBER : Invalid format.")
        }
        return phone
    }
}
