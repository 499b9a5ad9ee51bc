import CoreMetrics
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Mail waiting for the relay. Queuing returns at once (requests never wait on SMTP); the
/// service sends whatever is queued in one session, and retries a message whose failure is
/// transient (connection refused, 4yz replies) after growing delays. Queued mail is in memory
/// only: action codes are stored as hashes, so a restart cannot resend them anyway.
public final class MailQueue: Service, Sendable {
    public struct Full: Error {}

    /// Room for one message, taken before the request that sends it commits anything, so a
    /// full queue refuses the request up front. `enqueue` uses the room; a reservation
    /// released unused gives it back.
    public final class Reservation: Sendable {
        private let queue: MailQueue
        private let used = Atomic<Bool>(false)

        fileprivate init(queue: MailQueue) { self.queue = queue }

        public func enqueue(_ message: MailMessage) {
            let usedBefore = used.exchange(true, ordering: .relaxed)
            precondition(!usedBefore, "a mail reservation holds room for one message")
            queue.append(message)
        }

        deinit {
            if !used.load(ordering: .relaxed) { queue.release() }
        }
    }

    private struct Pending: Sendable {
        var message: MailMessage
        var attempts = 0
    }

    private struct State: Sendable {
        var pending: [Pending] = []
        /// Reservations not yet used: room promised to requests still writing.
        var reserved = 0
        /// Messages waiting out a retry delay.
        var retrying = 0
    }

    private let client: SMTPClient
    private let capacity: Int
    /// The wait before each retry; a message is dropped after the last.
    private let retryDelays: [Duration]
    private let logger: Logger
    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let delivered = Counter(label: "hearth_mail_delivered_total")
    private let undelivered = Counter(label: "hearth_mail_failed_total")
    private let retried = Counter(label: "hearth_mail_retries_total")

    /// Messages queued, promised room, or waiting to be retried (the metrics' queue depth).
    public var depth: Int { state.withLock { $0.pending.count + $0.reserved + $0.retrying } }

    public init(
        client: SMTPClient, capacity: Int = 10_000,
        retryDelays: [Duration] = [.seconds(1), .seconds(5), .seconds(30), .seconds(120), .seconds(600)],
        logger: Logger = Logger(label: "hearth.mail")
    ) {
        self.client = client
        self.capacity = capacity
        self.retryDelays = retryDelays
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Holds room for one message; throws `Full` when the relay has fallen this far behind.
    public func reserve() throws -> Reservation {
        try state.withLock { state in
            guard state.pending.count + state.reserved < capacity else { throw Full() }
            state.reserved += 1
        }
        return Reservation(queue: self)
    }

    private func append(_ message: MailMessage) {
        state.withLock { state in
            state.reserved -= 1
            state.pending.append(Pending(message: message))
        }
        wake.yield()
    }

    private func release() {
        state.withLock { $0.reserved -= 1 }
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { retries in
                for await _ in wakeups {
                    await sendQueued(retries: &retries, final: false)
                }
                // Shutting down: one last attempt for what is queued; scheduled retries are abandoned.
                retries.cancelAll()
                await sendQueued(retries: &retries, final: true)
            }
        } onGracefulShutdown: {
            self.wake.finish()
        }
    }

    private func sendQueued(retries: inout DiscardingTaskGroup, final: Bool) async {
        while true {
            let batch = state.withLock { state in
                defer { state.pending.removeAll() }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            let outcomes: [Result<Void, SMTPError>]
            do {
                outcomes = try await client.send(batch.map(\.message))
            } catch {
                let failure = (error as? SMTPError) ?? .connectionClosed
                logger.warning("SMTP session failed", metadata: ["error": "\(error)", "messages": "\(batch.count)"])
                outcomes = Array(repeating: .failure(failure), count: batch.count)
            }
            for (pending, outcome) in zip(batch, outcomes) {
                settle(pending, outcome, retries: &retries, final: final)
            }
        }
    }

    private func settle(
        _ pending: Pending, _ outcome: Result<Void, SMTPError>, retries: inout DiscardingTaskGroup, final: Bool
    ) {
        // Never the address: personal data stays out of the logs (the digest finds a recipient's lines).
        let recipient: Logger.MetadataValue = "\(pending.message.recipientDigest)"
        switch outcome {
        case .success:
            delivered.increment()
            logger.info("mail delivered", metadata: ["recipient": recipient, "subject": "\(pending.message.subject)"])
        case .failure(let error):
            var next = pending
            next.attempts += 1
            guard error.isTransient, next.attempts <= retryDelays.count, !final else {
                undelivered.increment()
                logger.error(
                    "mail not delivered",
                    metadata: [
                        "recipient": recipient, "error": "\(pending.message.withoutRecipient("\(error)"))", "attempts": "\(next.attempts)",
                    ])
                return
            }
            let delay = retryDelays[next.attempts - 1]
            logger.warning(
                "mail delivery will be retried",
                metadata: ["recipient": recipient, "error": "\(pending.message.withoutRecipient("\(error)"))", "in": "\(delay)"])
            retried.increment()
            state.withLock { $0.retrying += 1 }
            retries.addTask { [self] in
                let waited = (try? await Task.sleep(for: delay)) != nil
                state.withLock { state in
                    state.retrying -= 1
                    if waited { state.pending.append(next) }
                }
                guard waited else {
                    undelivered.increment()  // abandoned at shutdown
                    return
                }
                wake.yield()
            }
        }
    }
}
