#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LMDB

/// Where a data directory is when none is named: `$HEARTH_DATA_DIR` (read by each caller from
/// its environment), else this, relative to the working directory.
public let defaultDataDirectory = ".hearth/data"

/// An exclusive advisory lock on `<data>/hearth.lock`, held by the daemon for its lifetime and
/// by `projections rebuild`, so a rebuild can never run under a live daemon. Read-only tools
/// (audit) take no lock: LMDB lets them read beside the writer. The kernel drops the lock
/// when its holder dies, SIGKILL included.
public final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    public let path: String

    public init(directory: String, holder: String) throws {
        try Environment.createDirectories(directory)
        path = directory + "/hearth.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DataDirectoryLockError.cannotOpen(path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = pread(fd, &buffer, buffer.count, 0)
            close(fd)
            let owner = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                .trimmingCharacters(in: ["\n", " "])
            throw DataDirectoryLockError.held(path: path, by: owner)
        }
        let text = Array("\(getpid()) \(holder)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, text, text.count, 0)
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

public enum DataDirectoryLockError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, errno: Int32)
    case held(path: String, by: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let errno): "cannot open \(path): \(String(cString: strerror(errno)))"
        case .held(let path, let owner):
            "the data directory is in use (\(path) is held by \(owner.isEmpty ? "another process" : "pid \(owner)")); stop the daemon first"
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
