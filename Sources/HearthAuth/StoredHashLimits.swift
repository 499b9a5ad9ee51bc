import HearthDomain

/// The shape a stored password hash must have, and what verifying it may cost.
///
/// Imports outside these limits are refused (400), and verification refuses such a hash too
/// (it never matches). So no stored hash can crash a sign-in (swift-crypto traps on negative
/// or overflowing scrypt parameters), stall the shared hash pool with one attempt, or match
/// every password: an empty or tiny hash compares equal to an equally short derived key.
public enum StoredHashLimits {
    /// Derived keys and digests of every supported algorithm are 16 to 64 bytes.
    public static let hashBytes = 16...64
    /// scrypt imported from elsewhere: N up to 2^20 and 128·N·r bytes of memory up to 256 MiB.
    public static let scryptLogN = 1...20
    public static let scryptBlockSize = 1...32
    public static let scryptParallelization = 1...16
    public static let scryptMemoryBytes = 256 << 20
    /// bcrypt cost 14 is about a second per attempt; higher would hold a hashing thread longer.
    public static let bcryptCost = 4...14
    public static let pbkdf2Rounds = 1...120_000

    /// The Firebase error code naming the first limit `stored` breaks, or `nil` within them.
    public static func violation(_ stored: PasswordHash) -> String? {
        costViolation(stored) ?? shapeViolation(stored)
    }

    /// The limits on work factors alone, which an import's options decide for every user, so
    /// they can be checked once per request (before any hash is seen).
    public static func costViolation(_ stored: PasswordHash) -> String? {
        switch stored.algorithm {
        case _ where stored.algorithm.isStandardScrypt:
            guard let logN = stored.memoryCost, scryptLogN.contains(logN) else { return "INVALID_MEMORY_COST" }
            guard let r = stored.blockSize, scryptBlockSize.contains(r) else { return "INVALID_BLOCK_SIZE" }
            guard let p = stored.parallelization, scryptParallelization.contains(p) else { return "INVALID_PARALLELIZATION" }
            // Hearth's own hashes follow the configured parameters, which may use more memory.
            if stored.algorithm != .hearthScrypt && (128 << logN) * r > scryptMemoryBytes {
                return "INVALID_MEMORY_COST"
            }
            return nil
        case .firebaseScrypt:
            guard let rounds = stored.rounds, (1...8).contains(rounds) else { return "INVALID_ROUNDS" }
            guard let memoryCost = stored.memoryCost, (1...14).contains(memoryCost) else { return "INVALID_MEMORY_COST" }
            return nil
        case _ where stored.algorithm.isPBKDF2:
            guard let rounds = stored.rounds, pbkdf2Rounds.contains(rounds) else { return "INVALID_ROUNDS" }
            return nil
        case _ where stored.algorithm == .bcrypt || stored.algorithm.hmacDigestLength != nil:
            return nil  // bcrypt's cost is inside the hash; HMAC has none
        default:
            return "INVALID_HASH_ALGORITHM"
        }
    }

    /// The limits on the hash itself (and the key it depends on), user by user.
    static func shapeViolation(_ stored: PasswordHash) -> String? {
        switch stored.algorithm {
        case _ where stored.algorithm.isStandardScrypt:
            guard stored.keyLength.map({ $0 == stored.hash.count }) ?? true else { return "INVALID_DERIVED_KEY_LENGTH" }
            return hashBytes.contains(stored.hash.count) ? nil : "INVALID_PASSWORD_HASH"
        case .firebaseScrypt:
            // The hash is the signer key encrypted (AES-CTR), so exactly as long as the key.
            guard let key = stored.key, hashBytes.contains(key.count) else { return "INVALID_SIGNER_KEY" }
            return stored.hash.count == key.count ? nil : "INVALID_PASSWORD_HASH"
        case .bcrypt:
            // "$2a$", "$2b$" or "$2y$", a two-digit cost, "$", then 53 characters of salt and hash.
            let text = stored.hash
            guard text.count == 60, text[0] == UInt8(ascii: "$"), text[1] == UInt8(ascii: "2"),
                text[3] == UInt8(ascii: "$"), text[6] == UInt8(ascii: "$"),
                let cost = Int(String(decoding: text[4..<6], as: UTF8.self))
            else { return "INVALID_PASSWORD_HASH" }
            return bcryptCost.contains(cost) ? nil : "INVALID_ROUNDS"
        case _ where stored.algorithm.isPBKDF2:
            return hashBytes.contains(stored.hash.count) ? nil : "INVALID_PASSWORD_HASH"
        case _ where stored.algorithm.hmacDigestLength != nil:
            guard let key = stored.key, !key.isEmpty else { return "MISSING_SIGNER_KEY" }
            return stored.hash.count == stored.algorithm.hmacDigestLength ? nil : "INVALID_PASSWORD_HASH"
        default:
            return "INVALID_HASH_ALGORITHM"
        }
    }
}
