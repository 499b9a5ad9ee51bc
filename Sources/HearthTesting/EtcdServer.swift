import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A real etcd (Debian's `etcd-server`, which the test command installs) on loopback, one
/// member in a temporary directory, for the cluster tests. `pause` and `resume` stop and
/// continue the process (SIGSTOP / SIGCONT): to everyone calling it, etcd hangs, as it would
/// behind a partition.
public final class EtcdServer: @unchecked Sendable {
    public let clientURL: String
    private let process: Process
    private let directory: TemporaryDirectory

    public init() throws {
        directory = TemporaryDirectory("etcd")
        let client = try freePort()
        let peer = try freePort()
        clientURL = "http://127.0.0.1:\(client)"
        let peerURL = "http://127.0.0.1:\(peer)"
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = [
            "--name", "n1", "--data-dir", directory.path + "/data", "--listen-client-urls", clientURL, "--advertise-client-urls",
            clientURL, "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "n1=\(peerURL)",
            "--log-level", "error",
        ]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try waitUntilHealthy()
    }

    deinit { stop() }

    static var executable: String {
        for path in ["/usr/bin/etcd", "/usr/local/bin/etcd"] where FileManager.default.isExecutableFile(atPath: path) { return path }
        return "/usr/bin/etcd"
    }

    /// etcd stops answering, without closing its connections.
    public func pause() { kill(process.processIdentifier, SIGSTOP) }
    public func resume() { kill(process.processIdentifier, SIGCONT) }

    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGCONT)
        process.terminate()
        process.waitUntilExit()
    }

    private func waitUntilHealthy() throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { throw EtcdServerError.exited(process.terminationStatus) }
            if let data = try? Data(contentsOf: URL(string: clientURL + "/health")!),
                String(decoding: data, as: UTF8.self).contains("\"true\"")
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw EtcdServerError.notHealthy
    }
}

public enum EtcdServerError: Error {
    case exited(Int32)
    case notHealthy
}

/// A TCP port nothing listens on now (the kernel's choice, released at once).
public func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}
