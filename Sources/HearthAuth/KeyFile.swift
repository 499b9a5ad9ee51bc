#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Key files in the data directory (the signing key, the secrets key).
enum KeyFile {
    /// Creates `path` owner-only from the first byte (never a moment readable by others) with
    /// `bytes`, whole or not at all: written and synced under a temporary name, then linked into
    /// place (which fails if `path` exists), so a crash mid-write never leaves a short key that
    /// would be refused at every start. False if it exists or can not be written.
    static func writeNew(_ path: String, _ bytes: [UInt8]) -> Bool {
        let temporary = path + ".new-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { unlink(temporary) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else {
                close(fd)
                return false
            }
            written += count
        }
        let synced = fsync(fd) == 0
        guard close(fd) == 0, synced, link(temporary, path) == 0 else { return false }
        let directory = open(String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return true
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Removes `path` (a key no longer wanted), ignoring a file already gone.
    static func remove(_ path: String) {
        unlink(path)
    }
}
