#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment's one writer thread, with group commit.
///
/// Jobs are synchronous closures over a `WriteTransaction`. The thread takes every job that is
/// waiting (up to `maxBatchSize`), runs them in order in one transaction, commits once (one
/// fsync), then completes them all. Rules for jobs:
/// - A job that throws before writing anything fails alone; the rest of its batch commits.
/// - A job that throws after writing is rolled back by re-running its batch without it.
/// - On `MDB_MAP_FULL` the map is doubled and the whole batch re-runs, so a job may run more
///   than once: it must have no effects outside its transaction.
public final class Writer: @unchecked Sendable {
    public struct Statistics: Sendable, Equatable {
        public var batches = 0
        public var jobs = 0
        public var mapGrowths = 0
        /// The committed batches' time running their jobs, and in their commits (writing the
        /// pages and the fsyncs): where the writer's time goes.
        public var runningJobs = Duration.zero
        public var committing = Duration.zero
    }

    /// One committed batch, for an observer (metrics): how many jobs shared it, and how long
    /// its commit (the fsync) took.
    public struct Commit: Sendable {
        public var jobs: Int
        public var commitDuration: Duration
    }

    /// Calls `observer` on the writer thread after each commit, before the batch's jobs are told
    /// (keep it cheap). Observers are added at start and kept while the writer runs.
    public func observeCommits(_ observer: @escaping @Sendable (Commit) -> Void) {
        lock.withLock { observers.append(observer) }
    }
    private var observers: [@Sendable (Commit) -> Void] = []

    private unowned let environment: Environment
    public let maxBatchSize: Int
    private let lock = ConditionLock()
    private var queue: [any WriteJob] = []
    private var stopping = false
    private var stats = Statistics()
    private var thread: pthread_t?
    private let finished = Pending<Void>()

    init(environment: Environment, maxBatchSize: Int) {
        self.environment = environment
        self.maxBatchSize = max(1, maxBatchSize)
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let created = pthread_create(
            &tid, nil,
            { context in
                let writer = Unmanaged<Writer>.fromOpaque(context!).takeRetainedValue()
                writer.run()
                return nil
            }, box.toOpaque())
        precondition(created == 0, "cannot start the LMDB writer thread")
        thread = tid
    }

    /// True on the writer thread, the only thread that ever holds a write transaction.
    public var isWriterThread: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    public var statistics: Statistics { lock.withLock { stats } }

    /// Submits a job and suspends until its batch commits (or it fails).
    public func submit<T: Sendable>(_ work: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T {
        try await submit(work) { $0 }
    }

    /// `submit`, with `committed` run on the writer thread as the job's batch commits, before
    /// the caller's task runs again (a time read there is the commit's, not the scheduler's).
    public func submit<T, U: Sendable>(
        _ work: @escaping @Sendable (WriteTransaction) throws -> T, committed: @escaping @Sendable (T) -> U
    ) async throws -> U {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(Job(work: work) { continuation.resume(with: $0.map(committed)) })
        }
    }

    /// Submits a job and blocks the calling thread until it completes (for synchronous tools).
    public func perform<T>(_ work: @escaping (WriteTransaction) throws -> T) throws -> T {
        precondition(!isWriterThread, "perform called on the writer thread would deadlock")
        let outcome = Pending<T>()
        nonisolated(unsafe) let unsafeWork = work
        enqueue(Job(work: { try unsafeWork($0) }) { outcome.deliver($0) })
        return try outcome.value()
    }

    /// Submits a job without waiting. `completion` runs once the job's batch has committed or
    /// the job has failed: on the writer thread, or at once on the caller's if the writer has
    /// stopped. Jobs run in the order they are submitted.
    public func enqueue<T: Sendable>(
        _ work: @escaping @Sendable (WriteTransaction) throws -> T, completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        enqueue(Job(work: work, completion: completion))
    }

    private func enqueue(_ job: any WriteJob) {
        let accepted = lock.withLock {
            guard !stopping else { return false }
            queue.append(job)
            lock.broadcast()
            return true
        }
        if !accepted { job.finish(with: WriterError.stopped) }
    }

    /// Finishes the queued jobs, then ends the thread.
    func stop() {
        lock.withLock {
            stopping = true
            lock.broadcast()
        }
        finished.wait()
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    private func run() {
        while let batch = nextBatch() {
            process(batch)
        }
        finished.deliver(.success(()))
    }

    private func nextBatch() -> [any WriteJob]? {
        lock.withLock {
            while queue.isEmpty && !stopping { lock.wait() }
            if queue.isEmpty { return nil }
            let count = min(queue.count, maxBatchSize)
            let batch = Array(queue.prefix(count))
            queue.removeFirst(count)
            return batch
        }
    }

    private func process(_ batch: [any WriteJob]) {
        var live = batch
        var rolledBack: [(any WriteJob, any Error)] = []
        var growths = 0
        attempt: while true {
            let txn: WriteTransaction
            let begun = ContinuousClock.now
            do {
                txn = try environment.beginWrite()
            } catch {
                return finish(live, rolledBack, failure: error)
            }
            var index = 0
            while index < live.count {
                let job = live[index]
                let writesBefore = txn.writeCount
                do {
                    try job.run(txn)
                } catch {
                    if txn.writeCount != writesBefore && !txn.hitMapFull {
                        txn.abort()
                        rolledBack.append((job, error))
                        live.remove(at: index)
                        continue attempt
                    }
                    job.record(failure: error)
                }
                // Even a job that swallowed the error left the transaction unusable.
                if txn.hitMapFull {
                    txn.abort()
                    if let failure = grow() { return finish(live, rolledBack, failure: failure) }
                    growths += 1
                    continue attempt
                }
                index += 1
            }
            let commitStart = ContinuousClock.now
            do {
                try txn.commit()
            } catch {
                if error == .mapFull {
                    if let failure = grow() { return finish(live, rolledBack, failure: failure) }
                    growths += 1
                    continue attempt
                }
                return finish(live, rolledBack, failure: error)
            }
            let commitDuration = ContinuousClock.now - commitStart
            let observers = lock.withLock {
                stats.batches += 1
                stats.jobs += live.count
                stats.mapGrowths += growths
                stats.runningJobs += commitStart - begun
                stats.committing += commitDuration
                return self.observers
            }
            for observer in observers { observer(Commit(jobs: live.count, commitDuration: commitDuration)) }
            return finish(live, rolledBack, failure: nil)
        }
    }

    /// Grows the map; returns the error to fail the batch with if it cannot.
    private func grow() -> (any Error)? {
        do {
            try environment.growMap()
            return nil
        } catch {
            return error
        }
    }

    private func finish(_ live: [any WriteJob], _ rolledBack: [(any WriteJob, any Error)], failure: (any Error)?) {
        for job in live {
            if let failure { job.finish(with: failure) } else { job.finish() }
        }
        for (job, error) in rolledBack { job.finish(with: error) }
    }
}

public enum WriterError: Error, CustomStringConvertible {
    case stopped

    public var description: String { "the LMDB writer has stopped" }
}

private protocol WriteJob: AnyObject {
    func run(_ txn: WriteTransaction) throws
    func record(failure: any Error)
    func finish()
    func finish(with error: any Error)
}

private final class Job<T>: WriteJob {
    private let work: (WriteTransaction) throws -> T
    private let completion: (Result<T, any Error>) -> Void
    private var outcome: Result<T, any Error>?

    init(work: @escaping (WriteTransaction) throws -> T, completion: @escaping (Result<T, any Error>) -> Void) {
        self.work = work
        self.completion = completion
    }

    func run(_ txn: WriteTransaction) throws {
        outcome = nil
        outcome = .success(try work(txn))
    }

    func record(failure: any Error) { outcome = .failure(failure) }

    func finish() { completion(outcome ?? .failure(WriterError.stopped)) }

    func finish(with error: any Error) { completion(.failure(error)) }
}
