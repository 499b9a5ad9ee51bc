extension PasswordHash {
    /// How a stored hash was made, by the name the ledger records. Open (a struct, not an enum):
    /// a ledger written by a later version may name one this one does not verify, and must still
    /// be read.
    public struct Algorithm: RawRepresentable, Hashable, Sendable, Encodable, ExpressibleByStringLiteral,
        CustomStringConvertible
    {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }

        /// Hearth's own: standard scrypt with the daemon's parameters.
        public static let hearthScrypt: Algorithm = "SCRYPT"
        /// Firebase's modified scrypt (scrypt keys AES-CTR over the project's signer key).
        public static let firebaseScrypt: Algorithm = "FIREBASE_SCRYPT"
        public static let standardScrypt: Algorithm = "STANDARD_SCRYPT"
        public static let bcrypt: Algorithm = "BCRYPT"
        public static let pbkdf2SHA256: Algorithm = "PBKDF2_SHA256"
        public static let pbkdfSHA1: Algorithm = "PBKDF_SHA1"
        public static let hmacSHA512: Algorithm = "HMAC_SHA512"
        public static let hmacSHA256: Algorithm = "HMAC_SHA256"
        public static let hmacSHA1: Algorithm = "HMAC_SHA1"
        public static let hmacMD5: Algorithm = "HMAC_MD5"

        /// Every algorithm Hearth verifies.
        public static let verifiable: [Algorithm] = [
            .hearthScrypt, .firebaseScrypt, .standardScrypt, .bcrypt, .pbkdf2SHA256, .pbkdfSHA1, .hmacSHA512, .hmacSHA256,
            .hmacSHA1, .hmacMD5,
        ]

        /// Unsalted digests Firebase exports and imports, which Hearth refuses: an account
        /// imported with one could be cracked by table, and is better re-hashed first.
        public static let unsaltedDigestNames: Set<String> = ["MD5", "SHA1", "SHA256", "SHA512"]

        /// The digest's length in bytes, for the HMACs; nil for the others.
        public var hmacDigestLength: Int? {
            switch self {
            case .hmacSHA512: 64
            case .hmacSHA256: 32
            case .hmacSHA1: 20
            case .hmacMD5: 16
            default: nil
            }
        }

        public var isPBKDF2: Bool { self == .pbkdf2SHA256 || self == .pbkdfSHA1 }
        /// Standard scrypt, Hearth's or imported: the same function, other parameters.
        public var isStandardScrypt: Bool { self == .hearthScrypt || self == .standardScrypt }

        /// The name Firebase's import API (`hashAlgorithm`) and CLI (`--hash-algo`) give it:
        /// Firebase's modified scrypt is "SCRYPT" there; Hearth's own scrypt is exported as
        /// "STANDARD_SCRYPT". nil for a name Hearth does not verify.
        public var importName: String? {
            switch self {
            case .firebaseScrypt: "SCRYPT"
            case .hearthScrypt: Algorithm.standardScrypt.rawValue
            case _ where Self.verifiable.contains(self): rawValue
            default: nil
            }
        }

        /// The algorithm an import name (case-insensitive) stands for; nil when Hearth can not
        /// verify it.
        public init?(importName: String) {
            let name = importName.uppercased()
            if name == "SCRYPT" {
                self = .firebaseScrypt
            } else if let known = Self.verifiable.first(where: { $0.rawValue == name && $0 != .hearthScrypt && $0 != .firebaseScrypt }) {
                self = known
            } else {
                return nil
            }
        }

        public var description: String { rawValue }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }
}
