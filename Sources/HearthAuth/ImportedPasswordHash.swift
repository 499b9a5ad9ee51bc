import CCrypt
import Crypto
import CryptoExtras
import Foundation
import HearthCrypto
import HearthDomain

/// Verifiers for hashes imported from other systems (`accounts:batchCreate`). Each recomputes
/// the stored hash from the candidate password; a successful sign-in then re-hashes with
/// Hearth's scrypt, as Firebase does.
enum ImportedPasswordHash {
    /// Firebase's modified scrypt: scrypt(password, salt + separator, N = 2^memoryCost,
    /// r = rounds, p = 1) keys AES-256-CTR (zero IV), which encrypts the project's signer key.
    static func firebaseScrypt(_ password: String, _ stored: PasswordHash) throws -> Bool {
        guard let signerKey = stored.key, let rounds = stored.rounds, let memoryCost = stored.memoryCost,
            (1...8).contains(rounds), (1...14).contains(memoryCost)
        else { throw PasswordHashError.unsupported(stored.algorithm.rawValue) }
        let derived = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: stored.salt + (stored.saltSeparator ?? []), outputByteCount: 32,
            rounds: 1 << memoryCost, blockSize: rounds, parallelism: 1)
        let nonce = try AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16))
        let encrypted = try AES._CTR.encrypt(signerKey, using: derived, nonce: nonce)
        return constantTimeEquals(Array(encrypted), stored.hash)
    }

    /// bcrypt through libxcrypt: the stored hash is the modular-crypt string ("$2b$10$…").
    static func bcrypt(_ password: String, _ stored: PasswordHash) throws -> Bool {
        guard stored.hash.starts(with: Array("$2".utf8)), !stored.hash.contains(0),
            let setting = String(validating: stored.hash, as: UTF8.self)
        else { throw PasswordHashError.unsupported(stored.algorithm.rawValue) }
        // A NUL would end the C string early and let a prefix of the password match.
        guard !password.utf8.contains(0) else { return false }
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        defer { data.deallocate() }
        data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        guard let result = crypt_rn(password, setting, data, Int32(size)) else { return false }
        return constantTimeEquals(Array(String(cString: result).utf8), stored.hash)
    }

    /// PBKDF2 with SHA-256 or SHA-1, `rounds` iterations, as long as the stored hash.
    static func pbkdf2(_ password: String, _ stored: PasswordHash) throws -> Bool {
        guard let rounds = stored.rounds, rounds >= 1, !stored.hash.isEmpty else {
            throw PasswordHashError.unsupported(stored.algorithm.rawValue)
        }
        let function: KDF.Insecure.PBKDF2.HashFunction = stored.algorithm == .pbkdf2SHA256 ? .sha256 : .insecureSHA1
        let derived = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: stored.salt, using: function, outputByteCount: stored.hash.count,
            unsafeUncheckedRounds: rounds)
        return constantTimeEquals(derived.withUnsafeBytes { Array($0) }, stored.hash)
    }

    /// HMAC keyed with the imported key over salt + password (or password + salt).
    static func hmac(_ password: String, _ stored: PasswordHash) throws -> Bool {
        guard let key = stored.key.map(SymmetricKey.init(data:)) else { throw PasswordHashError.unsupported(stored.algorithm.rawValue) }
        let message = stored.passwordFirst ? Array(password.utf8) + stored.salt : stored.salt + Array(password.utf8)
        let code: [UInt8] =
            switch stored.algorithm {
            case .hmacSHA512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
            case .hmacSHA256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            case .hmacSHA1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
            case .hmacMD5: Array(HMAC<Insecure.MD5>.authenticationCode(for: message, using: key))
            default: throw PasswordHashError.unsupported(stored.algorithm.rawValue)
            }
        return constantTimeEquals(code, stored.hash)
    }
}
