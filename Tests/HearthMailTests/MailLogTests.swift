import HearthMail
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// What the queue logs about a message names its recipient by a digest, never by address: the
/// address is personal data, and logs are kept and shipped far from the ledger's erasure.
@Suite("mail: no addresses in the logs")
struct MailLogTests {
    /// Every entry a logger received, as text (message and metadata values).
    final class Captured: LogHandler, Sendable {
        let lines = Mutex<[String]>([])
        var metadata: Logger.Metadata {
            get { [:] }
            set {}
        }
        var logLevel: Logger.Level {
            get { .trace }
            set {}
        }
        subscript(metadataKey _: String) -> Logger.Metadata.Value? {
            get { nil }
            set {}
        }

        func log(event: LogEvent) {
            let values = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            lines.withLock { $0.append(([event.message.description] + values).joined(separator: " ")) }
        }
    }

    @Test("delivered, retried and refused mail: the recipient's digest, and the relay's reply without the address")
    func recipientsAreDigests() async throws {
        let relay = try FakeRelay(rcptReplies: ["451 4.2.0 <Later@Example.com> mailbox busy", "550 5.1.1 <gone@example.com>: no such user"])
        defer { relay.stop() }
        let captured = Captured()
        let logger = Logger(label: "mail-log-test") { _ in captured }
        let queue = MailQueue(
            client: try SMTPClient(settings: SMTPClientTests.settings(relay)), retryDelays: [.milliseconds(20)], logger: logger)
        let later = SMTPClientTests.message(to: "later@example.com")
        let gone = SMTPClientTests.message(to: "gone@example.com")
        let group = ServiceGroup(services: [queue], logger: Logger(label: "mail-log-test") { _ in SwiftLogNoOpLogHandler() })
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try queue.reserve().enqueue(later)
            try queue.reserve().enqueue(gone)
            var waited = 0
            while captured.lines.withLock({ $0.filter { $0.hasPrefix("mail delivered") || $0.hasPrefix("mail not delivered") }.count }) < 2,
                waited < 1000
            {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let lines = captured.lines.withLock { $0 }
        #expect(lines.contains { $0.hasPrefix("mail delivery will be retried") && $0.contains("recipient=\(later.recipientDigest)") })
        #expect(lines.contains { $0.hasPrefix("mail delivered") && $0.contains("recipient=\(later.recipientDigest)") })
        #expect(
            lines.contains { $0.hasPrefix("mail not delivered") && $0.contains("recipient=\(gone.recipientDigest)") && $0.contains("550") })
        #expect(lines.allSatisfy { !$0.lowercased().contains("@example.com") }, "\(lines)")
        // As `printf %s later@example.com | sha256sum | cut -c1-12` gives it.
        #expect(later.recipientDigest == "sha256:945b9253fc10")
    }
}
