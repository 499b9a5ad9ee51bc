import Crypto
import CryptoExtras
import Foundation
import HearthWire

/// A public key that checks JWT signatures: RS256 (RSA PKCS#1 v1.5) or ES256 (P-256). Hearth's
/// own signing key verifies ID tokens with one; configured backend keys verify custom tokens.
public struct VerificationKey: Sendable {
    enum Backing: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case ecdsa(P256.Signing.PublicKey)
    }

    let backing: Backing

    init(_ backing: Backing) {
        self.backing = backing
    }

    /// A PEM public key (SubjectPublicKeyInfo, e.g. a service account's certificate key), RSA or P-256.
    public init(pem: String) throws {
        if let key = try? _RSA.Signing.PublicKey(pemRepresentation: pem) {
            backing = .rsa(key)
        } else {
            backing = .ecdsa(try P256.Signing.PublicKey(pemRepresentation: pem))
        }
    }

    /// A JWK from a provider's key set (RFC 7517/7518): RSA (`n`, `e`) or P-256 (`x`, `y`);
    /// `nil` for anything else.
    public init?(jwk: [String: JSONValue]) {
        switch jwk["kty"]?.stringValue {
        case "RSA":
            guard let n = jwk["n"]?.stringValue.flatMap({ Base64URL.decode(Array($0.utf8)) }),
                let e = jwk["e"]?.stringValue.flatMap({ Base64URL.decode(Array($0.utf8)) }),
                let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { return nil }
            backing = .rsa(key)
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256",
                let x = jwk["x"]?.stringValue.flatMap({ Base64URL.decode(Array($0.utf8)) }),
                let y = jwk["y"]?.stringValue.flatMap({ Base64URL.decode(Array($0.utf8)) }), x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
            else { return nil }
            backing = .ecdsa(key)
        default:
            return nil
        }
    }

    /// The JWT `alg` this key checks.
    public var algorithm: SigningKey.Algorithm {
        switch backing {
        case .rsa: .rs256
        case .ecdsa: .es256
        }
    }

    /// Whether `signature` signs `message` under `algorithm` (a JWT header's `alg`) with this key.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: String?) -> Bool {
        guard algorithm == self.algorithm.rawValue else { return false }
        let digest = SHA256.hash(data: message)
        switch backing {
        case .rsa(let key):
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: digest, padding: .insecurePKCS1v1_5)
        case .ecdsa(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: digest)
        }
    }

    public var derRepresentation: Data {
        switch backing {
        case .rsa(let key): key.derRepresentation
        case .ecdsa(let key): key.derRepresentation
        }
    }

    public var pemRepresentation: String {
        switch backing {
        case .rsa(let key): key.pemRepresentation
        case .ecdsa(let key): key.pemRepresentation
        }
    }

    /// The key's own JWK members (RFC 7517/7518): `kty` and `n`, `e` or `crv`, `x`, `y`.
    var jwkMembers: [String: JSONValue] {
        switch backing {
        case .rsa(let key):
            guard let primitives = try? key.getKeyPrimitives() else { return [:] }
            return [
                "kty": "RSA", "n": .string(Base64URL.encode(primitives.modulus)),
                "e": .string(Base64URL.encode(primitives.publicExponent)),
            ]
        case .ecdsa(let key):
            let point = [UInt8](key.x963Representation)  // 0x04 || x || y
            return [
                "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point[1...32])),
                "y": .string(Base64URL.encode(point[33...64])),
            ]
        }
    }
}
