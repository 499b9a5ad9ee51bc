import Foundation
import Testing

@testable import HearthBridge

// Linux's socket API (Darwin spells SOCK_STREAM as a plain Int32).
#if canImport(Glibc)
import Glibc

/// The bridge process-internal: its own answers when the upstream is down, and suspending and
/// resuming on the app's notifications, on the same port.
@Suite("the bridge's lifecycle")
struct BridgeLifecycleTests {
    /// One HTTP/1.1 exchange over a fresh connection: the status line's code and the body, or
    /// nil when nothing listens.
    static func exchange(port: Int, request: String) -> (status: Int, body: String)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            response += chunk[..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let status = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return (status, text.components(separatedBy: "\r\n\r\n").dropFirst().joined())
    }

    static func post(port: Int, host: String? = nil) -> (status: Int, body: String)? {
        exchange(
            port: port,
            request: "POST /identitytoolkit.googleapis.com/v1/accounts:signUp?key=k HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
    }

    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<100 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("an upstream that is down is a 503 in the envelope at once; a foreign Host a 403; suspend and resume keep the port")
    func suspendAndResume() async throws {
        // A port nothing listens on: bound, then closed.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        let deadPort = Int(UInt16(bigEndian: address.sin_port))
        close(probe)

        let names = BridgeLifecycle(suspend: .init("test.background"), resume: .init("test.foreground"))
        var configuration = BridgeConfiguration(upstream: try Upstream("https://127.0.0.1:\(deadPort)"))
        configuration.lifecycle = names
        let bridge = try await HearthBridge.start(configuration)
        let port = bridge.port
        #expect(port > 0 && bridge.url.absoluteString == "http://127.0.0.1:\(port)")

        let started = ContinuousClock.now
        let down = try #require(Self.post(port: port))
        #expect(down.status == 503 && down.body.contains(#""status":"UNAVAILABLE""#) && down.body.contains("could not reach"))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(Self.post(port: port, host: "evil.example")?.status == 403)

        NotificationCenter.default.post(name: names.suspend, object: nil)
        #expect(try await Self.eventually { Self.post(port: port) == nil }, "still listening after the background notification")
        NotificationCenter.default.post(name: names.resume, object: nil)
        #expect(try await Self.eventually { Self.post(port: port)?.status == 503 }, "not listening again on \(port)")
        #expect(bridge.port == port)

        await bridge.stop()
        #expect(Self.post(port: port) == nil)
    }
}
#endif
