#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files written so that a crash or power loss leaves either the whole file or none: written
/// under a temporary name, fsynced, renamed, and the directory fsynced.
public enum DurableFiles {
    struct Failure: Error, CustomStringConvertible {
        let action: String
        let path: String
        let code: Int32

        var description: String { "cannot \(action) \(path): \(String(cString: strerror(code)))" }
    }

    /// Creates `path` (which must not exist), owner-only, hands its descriptor to `fill`,
    /// then fsyncs and closes it.
    static func create(_ path: String, _ fill: (Int32) throws -> Void) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(action: "create", path: path, code: errno) }
        defer { close(fd) }
        do {
            try fill(fd)
            guard fsync(fd) == 0 else { throw Failure(action: "fsync", path: path, code: errno) }
        } catch {
            unlink(path)  // never a file that looks whole and is not
            throw error
        }
    }

    /// Writes `bytes` to `path` whole or not at all (a temporary name, fsync, rename), in
    /// the store's errors.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        try translatingErrors {
            let temporary = path + ".partial"
            unlink(temporary)
            try create(temporary) { try writeAll($0, bytes[...], path: temporary) }
            try rename(temporary, to: path)
        }
    }

    /// `writeAtomically` for a file written in pieces: `fill` appends text through the function
    /// it is given (buffered, 1 MiB at a time). If `fill` throws, nothing is left behind.
    public static func writeAtomically(to path: String, _ fill: (_ append: (String) throws -> Void) throws -> Void) throws {
        try translatingErrors {
            let temporary = path + ".partial"
            unlink(temporary)
            try create(temporary) { fd in
                var buffer: [UInt8] = []
                buffer.reserveCapacity(1 << 20)
                try fill { text in
                    buffer.append(contentsOf: text.utf8)
                    if buffer.count >= 1 << 20 {
                        try writeAll(fd, buffer[...], path: temporary)
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
                try writeAll(fd, buffer[...], path: temporary)
            }
            try rename(temporary, to: path)
        }
    }

    /// Copies `source` to `destination` through a temporary name; `progress(bytesCopied)`.
    static func copy(_ source: String, to destination: String, progress: (Int) -> Void = { _ in }) throws {
        try rename(try stage(source, beside: destination, progress: progress), to: destination)
    }

    /// Copies `source` to `destination`'s temporary name, fsynced; returns that name, for a
    /// `rename` once every file of a set is staged.
    static func stage(_ source: String, beside destination: String, progress: (Int) -> Void = { _ in }) throws -> String {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw Failure(action: "open", path: source, code: errno) }
        defer { close(input) }
        let temporary = destination + ".partial"
        unlink(temporary)
        do {
            try create(temporary) { output in
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                var copied = 0
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count >= 0 else { throw Failure(action: "read", path: source, code: errno) }
                    if count == 0 { break }
                    try writeAll(output, buffer[..<count], path: temporary)
                    copied += count
                    progress(copied)
                }
            }
        } catch {
            unlink(temporary)
            throw error
        }
        return temporary
    }

    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, path: String) throws {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Failure(action: "write", path: path, code: errno) }
            offset += written
        }
    }

    static func rename(_ source: String, to destination: String) throws {
        guard Glibc.rename(source, destination) == 0 else { throw Failure(action: "rename", path: source, code: errno) }
        try syncDirectory(of: destination)
    }

    /// Makes the directory entries of `path`'s directory durable (a new or renamed file).
    public static func syncDirectory(of path: String) throws {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        try syncDirectory(at: directory.isEmpty ? "/" : directory)
    }

    /// Makes `directory`'s own entries durable.
    static func syncDirectory(at directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(action: "open", path: directory, code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure(action: "fsync", path: directory, code: errno) }
    }

    /// Creates `path` owner-only and makes its entry durable.
    static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o700) == 0 else { throw Failure(action: "create", path: path, code: errno) }
        try syncDirectory(of: path)
    }

    /// Removes `directory` and the files in it (a staging directory: no subdirectories).
    static func removeFlatDirectory(_ directory: String) {
        for name in names(in: directory) { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    /// A small file's bytes (a journal).
    static func contents(of path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(action: "open", path: path, code: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Failure(action: "read", path: path, code: errno) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    /// The names in `directory` (no `.` or `..`).
    public static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func size(of path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}
