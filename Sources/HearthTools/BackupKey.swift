import Crypto
import Foundation

/// The operator's backup key: backups are authenticated with HMAC-SHA256 under it, and restore
/// refuses a backup whose MAC does not verify. It is never written into a backup or the data
/// directory, so whoever can change a backup (its storage, its transport) can not make one
/// that restores: a swapped signing key or ledger changes a checksum, and the manifest holding
/// the checksums no longer matches its MAC.
public struct BackupKey: Sendable {
    /// The environment variable that names the key file when `--key-file` does not.
    public static let environmentVariable = "HEARTH_BACKUP_KEY_FILE"
    static let minimumBytes = 32

    private let key: SymmetricKey
    /// Names the key without revealing it (an HMAC of a fixed label under it), so a refusal
    /// can say which key a backup was made with.
    public let id: String

    /// The file's bytes, trailing line breaks and spaces left out (so an editor's newline does
    /// not change the key): at least 32, e.g. `openssl rand -base64 32 > FILE`.
    public init(file path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BackupError.badKey(path: path, reason: "it can not be read") }
        defer { try? handle.close() }
        let bytes = Array((try? handle.read(upToCount: 4097)) ?? Data())
        guard bytes.count <= 4096 else { throw BackupError.badKey(path: path, reason: "it is longer than 4 KiB") }
        var key = bytes[...]
        while let last = key.last, last == 0x0a || last == 0x0d || last == 0x20 { key.removeLast() }
        guard key.count >= Self.minimumBytes else {
            throw BackupError.badKey(path: path, reason: "it holds fewer than \(Self.minimumBytes) bytes")
        }
        self.init(bytes: Array(key))
    }

    init(bytes: [UInt8]) {
        key = SymmetricKey(data: bytes)
        id = Self.hex(HMAC<SHA256>.authenticationCode(for: Array("hearth backup key id".utf8), using: key).prefix(8))
    }

    /// HMAC-SHA256 of `bytes`, hex.
    func authenticationCode(for bytes: [UInt8]) -> String {
        Self.hex(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    /// Compares in constant time.
    func isValid(_ code: String, for bytes: [UInt8]) -> Bool {
        guard let decoded = Self.bytes(hex: code) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(decoded, authenticating: bytes, using: key)
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
