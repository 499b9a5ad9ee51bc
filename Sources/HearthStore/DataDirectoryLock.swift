import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock on `<data>/hearth.lock`, held by whoever writes the directory
/// (the daemon, `projections rebuild`, `demo`), so a rebuild can never run under a live
/// daemon. Read-only tools take no lock: LMDB lets them read beside the writer. The kernel
/// drops the lock when its holder dies, SIGKILL included.
final class DataDirectoryLock: Sendable {
    private let descriptor: Atomic<Int32>

    init(_ directory: DataDirectory, holder: String) throws {
        try directory.createIfMissing()
        let path = directory.lockFile
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
        descriptor = Atomic(fd)
    }

    /// Unlocks; once, from any thread.
    func release() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }

    deinit { release() }
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
