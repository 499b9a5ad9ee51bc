import HearthStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an export goes: `-` for standard output (a pipe to another tool, say), or a file,
/// written owner-only under a temporary name until whole (`DurableFiles`). A path that is there
/// and is not a regular file (a symlink, a device such as /dev/stdout) is refused: renaming
/// over it would replace it, not write through it.
enum ExportTarget {
    static let standardOutput = "-"

    /// Writes what `fill` appends to `path`.
    static func write(to path: String, _ fill: (_ append: (String) throws -> Void) throws -> Void) throws {
        guard path != standardOutput else {
            let output = Output.standardOutput
            try fill { output.write($0) }
            output.flush()
            return
        }
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw NotAFile(path: path)
        }
        try DurableFiles.writeAtomically(to: path, fill)
    }

    struct NotAFile: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "\(path) is there and is not a regular file (a link or a device): not replaced; give a new file's path, or - for standard output"
        }
    }
}
