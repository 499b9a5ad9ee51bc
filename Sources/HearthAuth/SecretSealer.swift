import Crypto
import Foundation
import HearthDomain
import Synchronization

/// Seals identity providers' client secrets for the ledger (AES-256-GCM with a key kept in the
/// data directory, beside the signing key) and opens them when a code exchange needs one. The
/// ledger, the logs and the audit output then hold ciphertext and a fingerprint, never the secret.
public final class SecretSealer: Sendable {
    private let path: String
    private let loaded = Mutex<SymmetricKey?>(nil)
    /// Each purpose's key, derived once (a refresh token's tag is made in every sign-in's write).
    private let derived = Mutex<[Purpose: SymmetricKey]>([:])

    /// The key file is read, or created, on first use (or by `prepare`).
    public init(keyFile path: String) { self.path = path }

    /// Reads the key file, or creates it: a daemon does so as it starts.
    public func prepare() throws { _ = try key() }

    public func seal(_ secret: String) throws -> ClientSecret {
        let box = try AES.GCM.seal(Array(secret.utf8), using: try key())
        guard let combined = box.combined else { throw SecretError.unsealable }
        return .sealed(sealed: Array(combined), fingerprint: try fingerprint(secret))
    }

    /// The secret itself: opened, or read from its file (first line).
    public func open(_ secret: ClientSecret) throws -> String {
        switch secret {
        case .sealed(let sealed, _):
            let box = try AES.GCM.SealedBox(combined: sealed)
            return String(decoding: try AES.GCM.open(box, using: try key()), as: UTF8.self)
        case .file(let path):
            // The first line of at most 4 KiB: a device or a huge file is not read on and on.
            guard let handle = FileHandle(forReadingAtPath: path) else { throw SecretError.unreadableFile(path) }
            defer { try? handle.close() }
            let bytes = (try? handle.read(upToCount: 4096)) ?? nil
            guard let bytes, let contents = String(data: bytes, encoding: .utf8),
                let line = contents.split(whereSeparator: \.isNewline).first.map(String.init), !line.isEmpty
            else { throw SecretError.unreadableFile(path) }
            return line.trimmingCharacters(in: .whitespaces)
        }
    }

    /// Which secret, without the secret: the first 8 bytes, hex, of its HMAC-SHA256 under a key
    /// derived from the secrets key. A plain hash of a low-entropy secret could be brute-forced
    /// by anyone who reads the fingerprint (an admin, an audit line); this one only with the key.
    public func fingerprint(_ secret: String) throws -> String {
        let fingerprintKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: try key(), info: Array("hearth client secret fingerprint v1".utf8), outputByteCount: 32)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(secret.utf8), using: fingerprintKey)
        return mac.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// What a sealed value is for: each purpose seals under a key of its own (derived from the
    /// secrets key), so a value sealed for one can never be opened as another.
    public enum Purpose: String, Sendable {
        /// A TOTP factor's shared secret, as the ledger and the projections keep it.
        case totpSecret = "hearth totp secret v1"
        /// `mfaEnrollment:start`'s session, handed to the client until `finalize`.
        case enrolmentSession = "hearth mfa enrolment session v1"
        /// A sign-in's `mfaPendingCredential`: the first factor passed, the second awaited.
        case pendingCredential = "hearth mfa pending credential v1"
        /// The console's session cookie.
        case consoleSession = "hearth console session v1"
        /// A refresh token's tag (`tag(_:for:)`): a token this daemon issued is told from a guessed one.
        case refreshToken = "hearth refresh token v1"
    }

    /// HMAC-SHA256 of `bytes` under `purpose`'s key: only a holder of the secrets key makes it.
    public func tag(_ bytes: [UInt8], for purpose: Purpose) throws -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: try key(for: purpose)))
    }

    /// Seals `bytes` for `purpose` (nonce, ciphertext and tag, combined).
    public func seal(_ bytes: [UInt8], for purpose: Purpose) throws -> [UInt8] {
        guard let combined = try AES.GCM.seal(bytes, using: try key(for: purpose)).combined else {
            throw SecretError.unsealable
        }
        return Array(combined)
    }

    /// What `seal(_:for:)` sealed for `purpose`; `nil` for anything else (altered, foreign,
    /// or sealed for another purpose).
    public func open(_ sealed: [UInt8], for purpose: Purpose) throws -> [UInt8]? {
        let key = try key(for: purpose)
        guard let box = try? AES.GCM.SealedBox(combined: sealed), let opened = try? AES.GCM.open(box, using: key) else {
            return nil
        }
        return Array(opened)
    }

    private func key(for purpose: Purpose) throws -> SymmetricKey {
        if let known = derived.withLock({ $0[purpose] }) { return known }
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: try key(), info: Array(purpose.rawValue.utf8), outputByteCount: 32)
        derived.withLock { $0[purpose] = key }
        return key
    }

    private func key() throws -> SymmetricKey {
        try loaded.withLock { loaded in
            if let loaded { return loaded }
            let key: SymmetricKey
            if let data = FileManager.default.contents(atPath: path) {
                guard data.count == 32 else { throw SecretError.badKeyFile(path) }
                key = SymmetricKey(data: data)
            } else {
                let fresh = SymmetricKey(size: .bits256)
                guard KeyFile.writeNew(path, fresh.withUnsafeBytes { Array($0) }) else { throw SecretError.badKeyFile(path) }
                key = fresh
            }
            loaded = key
            return key
        }
    }
}

public enum SecretError: Error, Equatable, CustomStringConvertible {
    case badKeyFile(String)
    case unreadableFile(String)
    case unsealable

    public var description: String {
        switch self {
        case .badKeyFile(let path): "the secrets key \(path) can not be read or created (32 bytes, mode 0600)"
        case .unreadableFile(let path): "the client secret file \(path) can not be read"
        case .unsealable: "a client secret could not be sealed"
        }
    }
}
