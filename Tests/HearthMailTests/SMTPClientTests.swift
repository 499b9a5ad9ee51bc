import Foundation
import HearthMail
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("mail: the SMTP client against a relay on loopback")
struct SMTPClientTests {
    static func settings(_ relay: FakeRelay, username: String? = nil, password: String? = nil) -> SMTPSettings {
        SMTPSettings(
            host: "127.0.0.1", port: relay.port, security: .none, username: username, password: password, trustRootsFile: nil,
            clientName: "hearth.test")
    }

    static func message(to recipient: String) -> MailMessage {
        MailMessage(fromName: "Hearth", fromAddress: "auth@example.com", to: recipient, subject: "Reset", text: "Hello\n")
    }

    @Test("one session: AUTH PLAIN, then each message as MAIL FROM, RCPT TO and DATA")
    func delivers() async throws {
        let relay = try FakeRelay()
        defer { relay.stop() }
        let client = try SMTPClient(settings: Self.settings(relay, username: "hearth", password: "relay-secret"))
        let results = try await client.send([Self.message(to: "a@example.com"), Self.message(to: "b@example.com")])
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
        let commands = relay.commands
        #expect(commands.first == "EHLO hearth.test")
        #expect(commands.contains("AUTH PLAIN " + Data("\0hearth\0relay-secret".utf8).base64EncodedString()))
        #expect(commands.filter { $0.hasPrefix("MAIL FROM:<auth@example.com>") }.count == 2)
        #expect(commands.contains("RCPT TO:<a@example.com>") && commands.contains("RCPT TO:<b@example.com>"))
        #expect(commands.last == "QUIT")
        #expect(relay.messages.count == 2)
        #expect(relay.messages[0].contains("To: a@example.com") && relay.messages[0].contains("Subject: Reset"))
    }

    @Test("a refused recipient fails that message only, permanent or transient by its code; the session goes on")
    func refusals() async throws {
        let relay = try FakeRelay(rcptReplies: ["550 5.1.1 no such user", "451 4.3.0 try again later"])
        defer { relay.stop() }
        let client = try SMTPClient(settings: Self.settings(relay))
        let results = try await client.send([
            Self.message(to: "gone@example.com"), Self.message(to: "busy@example.com"), Self.message(to: "fine@example.com"),
        ])
        guard case .failure(let gone) = results[0], case .failure(let busy) = results[1], case .success = results[2] else {
            Issue.record("unexpected outcomes: \(results)")
            return
        }
        #expect(gone == .refused(step: "RCPT TO", code: 550, text: "5.1.1 no such user") && !gone.isTransient)
        #expect(busy.isTransient)
        #expect(relay.commands.filter { $0 == "RSET" }.count == 2)
        #expect(relay.messages.count == 1)
        // No AUTH without credentials.
        #expect(!relay.commands.contains { $0.hasPrefix("AUTH") })
    }

    @Test("a relay that is not there fails the session before any message")
    func unreachable() async throws {
        // A port nothing listens on: the kernel's choice for a socket bound and closed at once.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 ? getsockname(probe, $0, &length) : -1 }
        }
        close(probe)
        let client = try SMTPClient(
            settings: SMTPSettings(
                host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)), security: .none, username: nil, password: nil,
                trustRootsFile: nil, clientName: "hearth.test"))
        await #expect(throws: (any Error).self) { try await client.send([Self.message(to: "a@example.com")]) }
    }
}
