import Crypto
import Foundation
import HearthStore

/// `hearth-backup.json`, written last into a backup directory: what the backup holds and how to
/// know it whole. A directory without it is an interrupted backup, and restore refuses it.
/// `hearth-backup.json.hmac`, beside it, authenticates its exact bytes under the operator's
/// backup key; as the manifest lists every file's SHA-256 (and each signing key's `kid`), it
/// authenticates the whole backup.
public struct BackupManifest: Codable, Sendable, Equatable {
    public static let fileName = "hearth-backup.json"
    public static let macFileName = "hearth-backup.json.hmac"
    /// 2: `backupKeyID` and the signing keys' `keyID`. Format 1 (no MAC) is still read.
    public static let currentFormat = 2
    static let macAlgorithm = "HMAC-SHA256"

    public struct File: Codable, Sendable, Equatable {
        public var name: String
        public var bytes: Int
        public var sha256: String
        /// A signing key's JWT `kid` (the first 20 bytes of its public key's SHA-256, DER):
        /// which key the ID tokens it signed name. `nil` for other files.
        public var keyID: String?
    }

    public var format: Int
    /// Unix milliseconds.
    public var createdAt: Int64
    public var source: String
    public var headSequence: UInt64
    public var headHash: String
    /// `hearth projections digest` of the copy: a restore must arrive at the same.
    public var projectionDigest: String
    public var files: [File]
    /// The id of the backup key the MAC file is under; `nil` for a backup made without one.
    public var backupKeyID: String?

    /// The manifest and its exact bytes (what the MAC covers).
    static func read(from directory: String) throws -> (BackupManifest, [UInt8]) {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { throw BackupError.incomplete(directory: directory) }
        let manifest: BackupManifest
        do {
            manifest = try JSONDecoder().decode(BackupManifest.self, from: data)
        } catch {
            throw BackupError.unreadableManifest(path: path)
        }
        guard manifest.format == 1 || manifest.format == currentFormat else { throw BackupError.unreadableManifest(path: path) }
        return (manifest, Array(data))
    }

    /// The MAC file's code, `nil` when there is none.
    static func readMAC(from directory: String) throws -> String? {
        let path = directory + "/" + macFileName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, parts[0] == macAlgorithm else { throw BackupError.unreadableManifest(path: path) }
        return String(parts[1])
    }

    /// The manifest, and before it (under `key`) its MAC: the manifest's presence still marks a
    /// finished backup.
    func write(to directory: String, key: BackupKey?) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes = Array(try encoder.encode(self)) + [0x0a]
        if let key {
            let line = "\(Self.macAlgorithm) \(key.authenticationCode(for: bytes))\n"
            try DurableFiles.writeAtomically(Array(line.utf8), to: directory + "/" + Self.macFileName)
        }
        try DurableFiles.writeAtomically(bytes, to: directory + "/" + Self.fileName)
    }

    /// SHA-256 (hex) of a file's bytes, read in 1 MiB pieces.
    static func checksum(of path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BackupError.missingFile(path: path) }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

public enum BackupError: Error, Equatable, CustomStringConvertible {
    case incomplete(directory: String)
    case unreadableManifest(path: String)
    case missingFile(path: String)
    case checksumMismatch(path: String)
    /// The copy, read back, is not what was copied (the chain, the projections or a key).
    case verificationFailed(String)
    case badKey(path: String, reason: String)
    /// Neither a backup key nor an explicit choice to go without one.
    case noBackupKey(restoring: Bool)
    /// The backup carries no MAC and going without was not allowed.
    case unauthenticated(directory: String)
    /// The manifest's MAC does not verify under the key given.
    case authenticationFailed(directory: String, keyGiven: String, backupNames: String?)

    public var description: String {
        switch self {
        case .incomplete(let directory):
            "\(directory) is not a complete Hearth backup (no \(BackupManifest.fileName): the backup was interrupted or this is another directory)"
        case .unreadableManifest(let path): "\(path) is not a Hearth backup manifest this version can read"
        case .missingFile(let path): "\(path) is missing from the backup"
        case .checksumMismatch(let path): "\(path) does not match the checksum the backup recorded: the backup is damaged"
        case .verificationFailed(let reason): "verification failed: \(reason)"
        case .badKey(let path, let reason):
            "the backup key \(path) is not usable: \(reason) (create one with: openssl rand -base64 32 > \(path))"
        case .noBackupKey(let restoring):
            restoring
                ? "no backup key: give the key the backup was made with (--key-file FILE, or $\(BackupKey.environmentVariable)); for a backup made without one, and only if you trust where it has been, --allow-unauthenticated"
                : "no backup key: give one with --key-file FILE (or $\(BackupKey.environmentVariable)) so that restore can tell the backup was not altered (create it with: openssl rand -base64 32 > FILE, and keep it away from the backups), or pass --unauthenticated"
        case .unauthenticated(let directory):
            "\(directory) carries no MAC (made without a backup key, or \(BackupManifest.macFileName) was removed): nothing proves it unaltered; restore it with --allow-unauthenticated only if you trust where it has been"
        case .authenticationFailed(let directory, let given, let named):
            "\(directory)/\(BackupManifest.fileName) does not verify under the backup key given (key \(given)\(named.map { "; the manifest names key \($0)" } ?? "")): the backup was altered, or made with another key. Nothing was restored"
        }
    }
}
