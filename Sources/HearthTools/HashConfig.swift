import Foundation
import HearthAuth
import HearthDomain
import HearthWire

/// How a file's password hashes were made, in the terms of `firebase auth:import`'s flags
/// (`--hash-algo`, `--hash-key`, `--salt-separator`, `--rounds`, `--mem-cost`,
/// `--parallelization`, `--block-size`, `--dk-len`, `--hash-input-order`). Hearth's exports
/// record it in the file (as `hashConfig`, with those flags' names), so importing one needs no flags.
public struct HashConfig: Hashable, Sendable {
    /// `--hash-algo`: SCRYPT is Firebase's modified scrypt; STANDARD_SCRYPT is Hearth's own.
    public var algorithm: String
    public var key: [UInt8]?
    public var saltSeparator: [UInt8]?
    public var rounds: Int?
    /// SCRYPT: log2 of N (1...14); STANDARD_SCRYPT: N itself.
    public var memoryCost: Int?
    public var parallelization: Int?
    public var blockSize: Int?
    public var derivedKeyLength: Int?
    public var passwordFirst = false

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public init(algorithm: String) { self.algorithm = algorithm.uppercased() }

    /// The algorithm the flag names, as the ledger records it (nil when Hearth can not verify it).
    var kind: PasswordHash.Algorithm? { PasswordHash.Algorithm(importName: algorithm) }

    /// The configuration a stored hash was made with (`nil` for none Firebase's import knows).
    public init?(stored hash: PasswordHash) {
        guard let name = hash.algorithm.importName else { return nil }
        switch hash.algorithm {
        case _ where hash.algorithm.isStandardScrypt:
            // Hearth's own scrypt stores log2(N); the flag takes N.
            guard let logN = hash.memoryCost else { return nil }
            self.init(algorithm: name)
            memoryCost = 1 << logN
            parallelization = hash.parallelization
            blockSize = hash.blockSize
            derivedKeyLength = hash.keyLength ?? hash.hash.count
        case .firebaseScrypt:
            self.init(algorithm: name)
            key = hash.key
            saltSeparator = hash.saltSeparator ?? []
            rounds = hash.rounds
            memoryCost = hash.memoryCost
        case .bcrypt:
            self.init(algorithm: name)
        case _ where hash.algorithm.isPBKDF2:
            self.init(algorithm: name)
            rounds = hash.rounds
        case _ where hash.algorithm.hmacDigestLength != nil:
            self.init(algorithm: name)
            key = hash.key
            passwordFirst = hash.passwordFirst
        default:
            return nil
        }
    }

    /// Checks what `firebase auth:import` checks, with its messages; and refuses algorithms
    /// Hearth can not verify (their users could never sign in).
    public func validate() throws {
        func require(_ value: Int?, _ range: ClosedRange<Int>, _ what: String) throws {
            guard let value, range.contains(value) else {
                throw Invalid("Must provide valid \(what)(\(range.lowerBound)..\(range.upperBound)) for hash algorithm \(algorithm)")
            }
        }
        guard let kind else {
            if PasswordHash.Algorithm.unsaltedDigestNames.contains(algorithm) {
                throw Invalid(
                    "Hearth cannot verify \(algorithm) password hashes; re-hash them (e.g. PBKDF2_SHA256 or SCRYPT) before importing")
            }
            throw Invalid("Unsupported hash algorithm \(algorithm)")
        }
        switch kind {
        case _ where kind.hmacDigestLength != nil:
            guard key != nil else { throw Invalid("Must provide hash key(base64 encoded) for hash algorithm \(algorithm)") }
        case _ where kind.isPBKDF2:
            try require(rounds, StoredHashLimits.pbkdf2Rounds, "rounds")
        case .firebaseScrypt:
            guard key != nil else { throw Invalid("Must provide hash key(base64 encoded) for hash algorithm \(algorithm)") }
            try require(rounds, 1...8, "rounds")
            try require(memoryCost, 1...14, "memory cost")
        case .standardScrypt:
            guard let cost = memoryCost, cost > 1, cost & (cost - 1) == 0 else {
                throw Invalid("Must provide a memory cost (N, a power of two) for hash algorithm STANDARD_SCRYPT")
            }
            // The daemon's own limits on what one imported hash may cost to check.
            let stored = PasswordHash(
                algorithm: .standardScrypt, hash: [], salt: [], memoryCost: cost.trailingZeroBitCount, blockSize: blockSize,
                parallelization: parallelization)
            if let violation = StoredHashLimits.costViolation(stored) {
                let maxLogN = StoredHashLimits.scryptLogN.upperBound
                let blockSizes = StoredHashLimits.scryptBlockSize
                let parallelizations = StoredHashLimits.scryptParallelization
                let mebibytes = StoredHashLimits.scryptMemoryBytes >> 20
                throw Invalid(
                    "\(violation): Hearth imports STANDARD_SCRYPT with N up to 2^\(maxLogN), --block-size \(blockSizes), --parallelization \(parallelizations) and at most \(mebibytes) MiB per check"
                )
            }
        default:
            break  // bcrypt: its cost is inside each hash
        }
    }

    /// The file's `hashConfig` object, keyed by the flags' names.
    public init(json value: JSONValue) throws {
        guard let fields = value.objectValue, let algorithm = fields["hashAlgo"]?.stringValue else {
            throw Invalid("hashConfig needs a hashAlgo")
        }
        self.init(algorithm: algorithm)
        func bytes(_ name: String) throws -> [UInt8]? {
            guard let value = fields[name] else { return nil }
            guard let text = value.stringValue, let decoded = Base64URL.decode(text) else {
                throw Invalid("hashConfig.\(name) must be base64")
            }
            return decoded
        }
        func int(_ name: String) throws -> Int? {
            switch fields[name] {
            case nil: return nil
            case .int(let value)?: return Int(value)
            case .string(let text)?: if let value = Int(text) { return value }
            default: break
            }
            throw Invalid("hashConfig.\(name) must be an integer")
        }
        key = try bytes("hashKey")
        saltSeparator = try bytes("saltSeparator")
        rounds = try int("rounds")
        memoryCost = try int("memCost")
        parallelization = try int("parallelization")
        blockSize = try int("blockSize")
        derivedKeyLength = try int("dkLen")
        passwordFirst = try Self.passwordFirst(order: fields["hashInputOrder"]?.stringValue)
    }

    /// `--hash-input-order`: SALT_FIRST (the default) or PASSWORD_FIRST.
    public static func passwordFirst(order: String?) throws -> Bool {
        switch order?.uppercased() {
        case nil, "SALT_FIRST": false
        case "PASSWORD_FIRST": true
        default: throw Invalid("Unknown password hash order flag")
        }
    }

    /// The `hashConfig` object, in the flags' names.
    public var json: JSONValue {
        var fields: [String: JSONValue] = ["hashAlgo": .string(algorithm)]
        if let key { fields["hashKey"] = .string(Data(key).base64EncodedString()) }
        if let saltSeparator { fields["saltSeparator"] = .string(Data(saltSeparator).base64EncodedString()) }
        if let rounds { fields["rounds"] = .int(Int64(rounds)) }
        if let memoryCost { fields["memCost"] = .int(Int64(memoryCost)) }
        if let parallelization { fields["parallelization"] = .int(Int64(parallelization)) }
        if let blockSize { fields["blockSize"] = .int(Int64(blockSize)) }
        if let derivedKeyLength { fields["dkLen"] = .int(Int64(derivedKeyLength)) }
        if passwordFirst { fields["hashInputOrder"] = "PASSWORD_FIRST" }
        return .object(fields)
    }

    /// The hash options of an `accounts:batchCreate` request, as `firebase auth:import` sends them.
    var requestFields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["hashAlgorithm": .string(algorithm)]
        if let key { fields["signerKey"] = .string(Base64URL.encode(key)) }
        if let rounds { fields["rounds"] = .int(Int64(rounds)) }
        if passwordFirst { fields["passwordHashOrder"] = "PASSWORD_AND_SALT" }
        switch kind {
        case .firebaseScrypt?:
            fields["saltSeparator"] = .string(Base64URL.encode(saltSeparator ?? []))
            if let memoryCost { fields["memoryCost"] = .int(Int64(memoryCost)) }
        case .standardScrypt?:
            if let memoryCost { fields["cpuMemCost"] = .int(Int64(memoryCost)) }
            if let parallelization { fields["parallelization"] = .int(Int64(parallelization)) }
            if let blockSize { fields["blockSize"] = .int(Int64(blockSize)) }
            if let derivedKeyLength { fields["dkLen"] = .int(Int64(derivedKeyLength)) }
        default: break
        }
        return fields
    }
}
