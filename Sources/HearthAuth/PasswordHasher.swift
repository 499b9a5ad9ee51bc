import CoreMetrics
import Crypto
import CryptoExtras
import Foundation
import HearthCrypto
import HearthDomain

/// scrypt password hashing from swift-crypto, on a bounded pool of threads.
public struct PasswordHasher: Sendable {
    /// scrypt work factors. N = 2^logN; the defaults are Firebase's (N=2^14, r=8, p=1).
    public struct Parameters: Sendable, Equatable {
        public var logN: Int
        public var blockSize: Int
        public var parallelization: Int
        public var keyLength: Int

        public init(logN: Int = 14, blockSize: Int = 8, parallelization: Int = 1, keyLength: Int = 32) {
            self.logN = logN
            self.blockSize = blockSize
            self.parallelization = parallelization
            self.keyLength = keyLength
        }
    }

    public static let algorithm = PasswordHash.Algorithm.hearthScrypt
    public static let minimumPasswordLength = 6

    public let parameters: Parameters
    private let pool: WorkPool

    public init(parameters: Parameters = Parameters(), pool: WorkPool) {
        self.parameters = parameters
        self.pool = pool
    }

    /// `client` (the caller's address) is whose turn in the pool the work takes.
    public func hash(_ password: String, client: String? = nil) async throws -> PasswordHash {
        let parameters = parameters
        return try await onPool(client) { try Self.hash(password, salt: Self.randomSalt(), parameters) }
    }

    /// Whether `password` matches; throws only for a hash this build cannot check.
    public func verify(_ password: String, against stored: PasswordHash, client: String? = nil) async throws -> Bool {
        try await onPool(client) { try Self.verify(password, against: stored) }
    }

    /// The client already has its share of the queue waiting (the abuse limits count it).
    public struct ClientShareFull: Error {}

    /// Lets the hashing threads finish what is queued and end (at shutdown).
    public func stop() { pool.stop() }

    /// Hashes and checks started so far.
    public var started: Int { pool.startedJobs }

    /// Hashes and checks waiting for a thread.
    public var waiting: Int { pool.waitingJobs }

    /// A full hashing queue is Firebase's "too many attempts", a 400 the SDKs know.
    private func onPool<T: Sendable>(_ client: String?, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await pool.run(client: client, body)
        } catch let busy as WorkPool.Busy {
            Counter(label: "hearth_password_hash_refusals_total", dimensions: [("queue", busy.clientShareFull ? "client" : "pool")])
                .increment()
            if busy.clientShareFull { throw ClientShareFull() }
            throw FirebaseError.bad("TOO_MANY_ATTEMPTS_TRY_LATER : too many password checks are waiting; try again later")
        }
    }

    /// Whether a stored hash should be replaced by one with the current parameters.
    public func isOutdated(_ stored: PasswordHash) -> Bool {
        stored.algorithm != Self.algorithm || stored.memoryCost != parameters.logN
            || stored.blockSize != parameters.blockSize || stored.parallelization != parameters.parallelization
            || stored.keyLength != parameters.keyLength
    }

    static func hash(_ password: String, salt: [UInt8], _ parameters: Parameters) throws -> PasswordHash {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: parameters.keyLength,
            rounds: 1 << parameters.logN, blockSize: parameters.blockSize, parallelism: parameters.parallelization)
        return PasswordHash(
            algorithm: algorithm, hash: key.withUnsafeBytes { Array($0) }, salt: salt, memoryCost: parameters.logN,
            blockSize: parameters.blockSize, parallelization: parameters.parallelization, keyLength: parameters.keyLength)
    }

    static func verify(_ password: String, against stored: PasswordHash) throws -> Bool {
        // Checked before any work: a hash outside the limits never matches (see StoredHashLimits).
        guard StoredHashLimits.violation(stored) == nil else { throw PasswordHashError.unsupported(stored.algorithm.rawValue) }
        switch stored.algorithm {
        case _ where stored.algorithm.isStandardScrypt:
            guard let logN = stored.memoryCost, let blockSize = stored.blockSize, let parallelization = stored.parallelization
            else { throw PasswordHashError.unsupported(stored.algorithm.rawValue) }
            let parameters = Parameters(
                logN: logN, blockSize: blockSize, parallelization: parallelization, keyLength: stored.hash.count)
            let candidate = try hash(password, salt: stored.salt, parameters)
            return constantTimeEquals(candidate.hash, stored.hash)
        case .firebaseScrypt: return try ImportedPasswordHash.firebaseScrypt(password, stored)
        case .bcrypt: return try ImportedPasswordHash.bcrypt(password, stored)
        case _ where stored.algorithm.isPBKDF2: return try ImportedPasswordHash.pbkdf2(password, stored)
        case _ where stored.algorithm.hmacDigestLength != nil: return try ImportedPasswordHash.hmac(password, stored)
        default:
            throw PasswordHashError.unsupported(stored.algorithm.rawValue)
        }
    }

    static func randomSalt() -> [UInt8] {
        SecureRandom.bytes(16)
    }
}

public enum PasswordHashError: Error, Equatable {
    case unsupported(String)
}
