import Foundation

/// A fixed set of threads for CPU-heavy work (password hashing, RS256 signatures), so it never
/// runs on the HTTP event loops, and at most `threads` jobs run at once.
///
/// The queue is bounded, and fair between clients: each client (the caller's IP address) has
/// its own queue, the threads take one job from each waiting client in turn, and a client with
/// `maxQueuedPerClient` jobs waiting is refused (`Busy`) at once. So one address flooding the
/// pool with password guesses waits behind itself, not in front of everyone else; past
/// `maxQueued` waiting jobs in all, every caller is refused, instead of growing a backlog that
/// every later request would wait behind.
public final class WorkPool: @unchecked Sendable {
    public struct Busy: Error, Equatable {
        /// The client's own share of the queue was full (the queue itself was not).
        public var clientShareFull: Bool

        public init(clientShareFull: Bool = false) { self.clientShareFull = clientShareFull }
    }

    private typealias Job = @Sendable () -> Void

    private let condition = NSCondition()
    private let maxQueued: Int
    private let maxQueuedPerClient: Int?
    // Guarded by `condition`.
    private var queues: [String: [Job]] = [:]
    /// Clients with waiting jobs, in the order the threads serve them (from `turnStart`).
    private var turn: [String] = []
    private var turnStart = 0
    private var waiting = 0
    private var started = 0
    private var stopping = false

    /// `maxQueued` defaults to 64 jobs per thread: about three seconds of scrypt at N=2^14.
    public init(threads: Int, name: String, maxQueued: Int? = nil, maxQueuedPerClient: Int? = nil) {
        self.maxQueued = max(1, maxQueued ?? 64 * max(1, threads))
        self.maxQueuedPerClient = maxQueuedPerClient.map { max(1, $0) }
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    deinit { stop() }

    /// Runs `body` on a pool thread in `client`'s turn and returns its result; throws `Busy`
    /// when the queue, or the client's share of it, is full. Jobs without a client share one queue.
    public func run<T: Sendable>(client: String? = nil, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            if let refused = enqueue(client ?? "", { continuation.resume(with: Result { try body() }) }) {
                continuation.resume(throwing: refused)
            }
        }
    }

    /// Jobs queued and not yet started.
    public var waitingJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    /// Jobs started since the pool began (metrics; tests that prove work was done).
    public var startedJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    /// Lets the threads finish queued work and exit.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `job`, or says why not.
    private func enqueue(_ client: String, _ job: @escaping Job) -> Busy? {
        condition.lock()
        defer { condition.unlock() }
        let queued = queues[client]?.count ?? 0
        guard waiting < maxQueued else { return Busy() }
        if let maxQueuedPerClient, !client.isEmpty, queued >= maxQueuedPerClient { return Busy(clientShareFull: true) }
        if queued == 0 { turn.append(client) }
        queues[client, default: []].append(job)
        waiting += 1
        condition.signal()
        return nil
    }

    private func work() {
        while true {
            condition.lock()
            while waiting == 0 && !stopping { condition.wait() }
            if waiting == 0 {
                condition.unlock()
                return
            }
            let job = next()
            started += 1
            condition.unlock()
            job()
        }
    }

    /// The first job of the client whose turn it is; a client with more waiting goes to the back.
    private func next() -> Job {
        let client = turn[turnStart]
        turnStart += 1
        var queue = queues.removeValue(forKey: client) ?? []
        let job = queue.removeFirst()
        if !queue.isEmpty {
            queues[client] = queue
            turn.append(client)
        }
        if turnStart > 1024 {
            turn.removeFirst(turnStart)
            turnStart = 0
        }
        waiting -= 1
        return job
    }
}
