import Foundation

/// A fixed set of threads for CPU-heavy work (password hashing), so it never runs on the
/// HTTP event loops or the cooperative pool, and at most `threads` hashes run at once.
///
/// The queue is bounded too: past `maxQueued` waiting jobs, `run` throws `Busy` at once, so
/// a flood of sign-in attempts is refused instead of growing a backlog that every later
/// sign-up, sign-in and reset would wait behind.
public final class WorkPool: @unchecked Sendable {
    public struct Busy: Error, Equatable {
        public init() {}
    }

    private let condition = NSCondition()
    private let maxQueued: Int
    // Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    private var started = 0
    private var stopping = false

    /// `maxQueued` defaults to 64 jobs per thread: about three seconds of scrypt at N=2^14.
    public init(threads: Int, name: String, maxQueued: Int? = nil) {
        self.maxQueued = max(1, maxQueued ?? 64 * max(1, threads))
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    deinit { stop() }

    /// Runs `body` on a pool thread and returns its result; throws `Busy` when the queue is full.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            if !enqueue({ continuation.resume(with: Result { try body() }) }) {
                continuation.resume(throwing: Busy())
            }
        }
    }

    /// Jobs queued and not yet started.
    public var waitingJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count
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

    /// Queues `job` unless `maxQueued` jobs are already waiting.
    private func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard jobs.count < maxQueued else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            started += 1
            condition.unlock()
            job()
        }
    }
}
