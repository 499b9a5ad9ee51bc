import Foundation
import HearthAuth

/// How Hearth hashes the passwords it sets: scrypt's cost, and how many hashes run at once.
public struct PasswordSettings: Sendable, Equatable {
    public var scryptLogN = 14
    public var scryptBlockSize = 8
    public var scryptParallelization = 1
    public var hashThreads = max(1, ProcessInfo.processInfo.activeProcessorCount)

    public init() {}

    public struct Valid: Sendable, Equatable {
        public let parameters: PasswordHasher.Parameters
        public let hashThreads: Int
    }

    func validated() throws -> Valid {
        // Within the limits every stored hash is verified against, or Hearth's own would never match.
        guard (10...StoredHashLimits.scryptLogN.upperBound).contains(scryptLogN),
            StoredHashLimits.scryptBlockSize.contains(scryptBlockSize),
            StoredHashLimits.scryptParallelization.contains(scryptParallelization)
        else { throw ConfigurationError.invalid("scrypt parameters", source: "logN \(scryptLogN)") }
        try LimitsSettings.check("hashThreads", hashThreads, 1...256)
        return Valid(
            parameters: PasswordHasher.Parameters(
                logN: scryptLogN, blockSize: scryptBlockSize, parallelization: scryptParallelization),
            hashThreads: hashThreads)
    }
}
