import Crypto
import CryptoExtras
import Foundation
import HearthWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that signs ID tokens. Generated on first start into the data directory (mode 0600)
/// and published as a JWK; it never enters the ledger (secrets come from configuration or
/// files, never from the ledger or logs).
public struct SigningKey: Sendable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case rs256 = "RS256"
        case es256 = "ES256"
    }

    private enum Backing: Sendable {
        /// swift-crypto holds the key (generation, PEM, the public half); OpenSSL signs with it.
        case rsa(_RSA.Signing.PrivateKey, OpenSSLRSASigner)
        case ecdsa(P256.Signing.PrivateKey)
    }

    private let backing: Backing
    /// The public half, derived once: swift-crypto builds a fresh key object (and BoringSSL
    /// its Montgomery context) on every `publicKey` access, which every verification would pay.
    public let publicKey: VerificationKey
    public let algorithm: Algorithm
    /// The JWT `kid`: derived from the public key, so it changes exactly when the key does.
    public let keyID: String
    /// The JWT header of every token this key signs, encoded once.
    let encodedJWTHeader: String

    private init(_ backing: Backing, algorithm: Algorithm) {
        self.backing = backing
        self.algorithm = algorithm
        publicKey =
            switch backing {
            case .rsa(let key, _): VerificationKey(.rsa(key.publicKey))
            case .ecdsa(let key): VerificationKey(.ecdsa(key.publicKey))
            }
        keyID = SHA256.hash(data: publicKey.derRepresentation).prefix(20).map { String(format: "%02x", $0) }.joined()
        encodedJWTHeader = JWT.encodedHeader(algorithm: algorithm, keyID: keyID)
    }

    public static func generate(_ algorithm: Algorithm) throws -> SigningKey {
        switch algorithm {
        case .rs256: try SigningKey(rsa: try _RSA.Signing.PrivateKey(keySize: .bits2048))
        case .es256: SigningKey(.ecdsa(P256.Signing.PrivateKey()), algorithm: algorithm)
        }
    }

    public init(pem: String, algorithm: Algorithm) throws {
        switch algorithm {
        case .rs256: try self.init(rsa: try _RSA.Signing.PrivateKey(pemRepresentation: pem))
        case .es256: self.init(.ecdsa(try P256.Signing.PrivateKey(pemRepresentation: pem)), algorithm: algorithm)
        }
    }

    private init(rsa key: _RSA.Signing.PrivateKey) throws {
        guard let signer = OpenSSLRSASigner(pem: key.pemRepresentation) else { throw SigningKeyError.openSSLRefusedKey }
        self.init(.rsa(key, signer), algorithm: .rs256)
    }

    public var pem: String {
        switch backing {
        case .rsa(let key, _): key.pemRepresentation
        case .ecdsa(let key): key.pemRepresentation
        }
    }

    /// The public half, as SubjectPublicKeyInfo PEM.
    public var publicKeyPEM: String { publicKey.pemRepresentation }

    /// Loads the PEM file at `path`, creating it on first start. A key file that exists but
    /// cannot be read or parsed stops the daemon: replacing it would silently invalidate every
    /// token it signed.
    public static func loadOrCreate(at path: String, algorithm: Algorithm) throws -> SigningKey {
        if access(path, F_OK) == 0 { return try load(at: path, algorithm: algorithm) }
        return try create(at: path, algorithm: algorithm)
    }

    /// The key in the PEM file at `path`.
    public static func load(at path: String, algorithm: Algorithm) throws -> SigningKey {
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw SigningKeyError.unreadable(path) }
        do {
            return try SigningKey(pem: pem, algorithm: algorithm)
        } catch {
            throw SigningKeyError.unreadable(path)
        }
    }

    /// A new key, written to `path` (which must not exist) before it is returned: durable
    /// before any token it signs leaves the process.
    public static func create(at path: String, algorithm: Algorithm) throws -> SigningKey {
        let key = try generate(algorithm)
        guard KeyFile.writeNew(path, Array(key.pem.utf8)) else { throw SigningKeyError.cannotWrite(path) }
        return key
    }

    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        let digest = SHA256.hash(data: message)
        switch backing {
        case .rsa(_, let signer):
            return try signer.sign(digest: Array(digest))
        case .ecdsa(let key):
            return [UInt8](try key.signature(for: digest).rawRepresentation)
        }
    }

    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        publicKey.isValidSignature(signature, for: message, algorithm: algorithm.rawValue)
    }

    /// The public half as a JWK (RFC 7517), for `/.well-known/jwks.json`.
    public var publicJWK: JSONValue {
        let jwk: [String: JSONValue] = ["kid": .string(keyID), "alg": .string(algorithm.rawValue), "use": "sig"]
        return .object(jwk.merging(publicKey.jwkMembers) { own, _ in own })
    }
}

public enum SigningKeyError: Error, CustomStringConvertible {
    case cannotWrite(String)
    case unreadable(String)
    case openSSLRefusedKey

    public var description: String {
        switch self {
        case .cannotWrite(let path): "cannot write the signing key to \(path)"
        case .openSSLRefusedKey: "OpenSSL (libcrypto) could not load the RSA signing key"
        case .unreadable(let path):
            "the signing key \(path) cannot be read or parsed; restore it (tokens it signed depend on it) or remove it to start with a new key"
        }
    }
}
