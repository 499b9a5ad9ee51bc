import Foundation

/// The package's built executables, found beside the running test binary.
public enum BuiltProducts {
    public static var directory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On Linux the tests run from <build>/<name>PackageTests.xctest; on macOS from inside a bundle.
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("hearth").path) {
            url = url.deletingLastPathComponent()
        }
        return url.path
    }

    public static func path(_ name: String) -> String { directory + "/" + name }
}

public struct ProcessResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// Runs a program to completion and captures its output.
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Drain both pipes concurrently so a chatty child cannot block on a full pipe.
    nonisolated(unsafe) var errData = Data()
    let drained = DispatchGroup()
    DispatchQueue.global().async(group: drained) { errData = err.fileHandleForReading.readDataToEndOfFile() }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    drained.wait()
    return ProcessResult(
        status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
        standardError: String(decoding: errData, as: UTF8.self))
}

/// Runs the `hearth` executable built with the tests.
public func runHearth(_ arguments: [String]) throws -> ProcessResult {
    try runProcess(BuiltProducts.path("hearth"), arguments)
}
