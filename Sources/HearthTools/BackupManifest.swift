import Crypto
import Foundation
import HearthStore

/// `hearth-backup.json`, written last into a backup directory: what the backup holds and how to
/// know it whole. A directory without it is an interrupted backup, and restore refuses it.
public struct BackupManifest: Codable, Sendable, Equatable {
    public static let fileName = "hearth-backup.json"
    public static let currentFormat = 1

    public struct File: Codable, Sendable, Equatable {
        public var name: String
        public var bytes: Int
        public var sha256: String
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

    static func read(from directory: String) throws -> BackupManifest {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { throw BackupError.incomplete(directory: directory) }
        let manifest: BackupManifest
        do {
            manifest = try JSONDecoder().decode(BackupManifest.self, from: data)
        } catch {
            throw BackupError.unreadableManifest(path: path)
        }
        guard manifest.format == currentFormat else { throw BackupError.unreadableManifest(path: path) }
        return manifest
    }

    func write(to directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try DurableFiles.writeAtomically(Array(try encoder.encode(self)) + [0x0a], to: directory + "/" + Self.fileName)
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

    public var description: String {
        switch self {
        case .incomplete(let directory):
            "\(directory) is not a complete Hearth backup (no \(BackupManifest.fileName): the backup was interrupted or this is another directory)"
        case .unreadableManifest(let path): "\(path) is not a Hearth backup manifest this version can read"
        case .missingFile(let path): "\(path) is missing from the backup"
        case .checksumMismatch(let path): "\(path) does not match the checksum the backup recorded: the backup is damaged"
        case .verificationFailed(let reason): "verification failed: \(reason)"
        }
    }
}
