import HearthDomain

/// Input rules shared by the flows, in the emulator's words.
public enum Validation {
    /// Lowercased; `local@domain` with exactly one '@', as the emulator checks.
    public static func email(_ email: String?) throws -> String {
        guard let email, !email.isEmpty else { throw FirebaseError.missingEmail }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, email.utf8.count <= 320 else {
            throw FirebaseError.invalidEmail
        }
        return normalizeEmail(email)
    }

    public static func password(_ password: String?) throws -> String {
        guard let password, !password.isEmpty else { throw FirebaseError.missingPassword }
        guard password.count >= PasswordHasher.minimumPasswordLength else { throw FirebaseError.weakPassword }
        // scrypt takes any length, but a megabyte "password" is an attack on the hash pool.
        guard password.utf8.count <= 4096 else { throw FirebaseError.bad("INVALID_PASSWORD : Password is too long") }
        return password
    }

    /// Custom claims: a JSON object of at most 1000 characters without reserved names.
    public static func customClaims(_ text: String) throws -> String? {
        guard text.count <= 1000 else { throw FirebaseError.bad("CLAIMS_TOO_LARGE") }
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
        guard phone.first == "+", (4...20).contains(digits.count), digits.allSatisfy(\.isNumber) else {
            throw FirebaseError.bad("INVALID_PHONE_NUMBER : Invalid format.")
        }
        return phone
    }
}
