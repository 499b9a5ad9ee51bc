#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Key files in the data directory (the signing key, the secrets key).
enum KeyFile {
    /// Creates `path` owner-only from the first byte (never a moment readable by others), writes
    /// `bytes` and makes file and directory entry durable. False if it exists or can not be written.
    static func writeNew(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { return false }
            offset += written
        }
        guard fsync(fd) == 0 else { return false }
        let directory = open(String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return true
    }
}
