import Foundation

/// A fresh directory for one test's LMDB environment, removed when released.
/// `$HEARTH_TEST_TMPDIR` chooses where they go (default: the system temporary directory).
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "hearth-test") {
        let root = ProcessInfo.processInfo.environment["HEARTH_TEST_TMPDIR"] ?? NSTemporaryDirectory()
        path = (root as NSString).appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
