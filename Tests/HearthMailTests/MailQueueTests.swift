import HearthMail
import Logging
import ServiceLifecycle
import Testing

@Suite("mail: the outgoing queue")
struct MailQueueTests {
    static let quiet: Logger = {
        var logger = Logger(label: "mail-test")
        logger.logLevel = .critical
        return logger
    }()

    @Test("room is reserved before a request commits: past capacity it is refused, and an unused reservation gives it back")
    func capacity() throws {
        let relay = try FakeRelay()
        defer { relay.stop() }
        let queue = MailQueue(client: try SMTPClient(settings: SMTPClientTests.settings(relay)), capacity: 1, logger: Self.quiet)
        var held: MailQueue.Reservation? = try queue.reserve()
        #expect(throws: MailQueue.Full.self) { try queue.reserve() }
        #expect(queue.depth == 1)
        _ = held
        held = nil
        #expect(queue.depth == 0)
        _ = try queue.reserve()
    }

    @Test("a message the relay defers (4yz) is sent again after the retry delay")
    func retriesTransientFailures() async throws {
        let relay = try FakeRelay(rcptReplies: ["451 4.3.0 try again later"])
        defer { relay.stop() }
        let queue = MailQueue(
            client: try SMTPClient(settings: SMTPClientTests.settings(relay)), retryDelays: [.milliseconds(20)], logger: Self.quiet)
        let group = ServiceGroup(services: [queue], logger: Self.quiet)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try queue.reserve().enqueue(SMTPClientTests.message(to: "later@example.com"))
            var waited = 0
            while relay.messages.isEmpty && waited < 1000 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            #expect(relay.messages.count == 1, "not delivered on the retry")
            #expect(relay.commands.filter { $0 == "RCPT TO:<later@example.com>" }.count == 2)
            #expect(queue.depth == 0)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
