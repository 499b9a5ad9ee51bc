import Dispatch
import Foundation
import HearthTesting
import LMDB
import Synchronization
import Testing

@Suite("LMDB writer thread and group commit")
struct WriterTests {
    let directory = TemporaryDirectory("lmdb")

    func open(_ configure: (inout EnvironmentOptions) -> Void = { _ in }) throws -> (Environment, Database<BigEndianUInt64, [UInt8]>) {
        var options = EnvironmentOptions()
        configure(&options)
        let environment = try Environment(path: directory.path, options: options)
        return (environment, try environment.openDatabase(named: "values"))
    }

    @Test("close from many threads at once closes once; a write after it fails with stopped instead of trapping")
    func closeIsThreadSafe() async throws {
        let (environment, database) = try open()
        try environment.writer.perform { txn in try txn.put(database, BigEndianUInt64(1), [1]) }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in environment.close() }
        await #expect(throws: WriterError.self) {
            try await environment.writer.submit { txn in try txn.put(database, BigEndianUInt64(2), [2]) }
        }
    }

    @Test("a Pending result reaches every waiter, error included, however often it is read")
    func pendingDeliversOnce() throws {
        let pending = Pending<Int>()
        let seen = Mutex<[Int]>([])
        let threads = (0..<4).map { _ in
            Thread {
                if let value = try? pending.value() { seen.withLock { $0.append(value) } }
            }
        }
        threads.forEach { $0.start() }
        pending.deliver(.success(42))
        while seen.withLock({ $0.count }) < 4 { usleep(1000) }
        #expect(seen.withLock { $0 } == [42, 42, 42, 42])
        #expect(try pending.value() == 42)
        struct Failed: Error {}
        let failing = Pending<Void>()
        failing.deliver(.failure(Failed()))
        #expect(throws: Failed.self) { try failing.value() }
        failing.wait()  // an error is a result too: waiting returns
    }

    @Test func everyWriteRunsOnTheWriterThread() async throws {
        let (environment, database) = try open()
        defer { environment.close() }
        final class Recorder: Sendable {
            let threads = Mutex<Set<UInt>>([])
            let offWriterThread = Atomic<Int>(0)
        }
        let recorder = Recorder()
        #expect(!environment.writer.isWriterThread)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<50 {
                group.addTask {
                    for index in 0..<20 {
                        try await environment.writer.submit { txn in
                            if !environment.writer.isWriterThread { recorder.offWriterThread.add(1, ordering: .relaxed) }
                            recorder.threads.withLock { _ = $0.insert(UInt(pthread_self())) }
                            try txn.put(database, BigEndianUInt64(UInt64(task * 100 + index)), [UInt8(task)])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(recorder.offWriterThread.load(ordering: .relaxed) == 0)
        #expect(recorder.threads.withLock { $0.count } == 1)
        #expect(recorder.threads.withLock { $0.contains(UInt(pthread_self())) } == false)
        let count = try environment.snapshot { try $0.count(database) }
        #expect(count == 1000)
        let stats = environment.writer.statistics
        // 50 concurrent submitters: the writer must have batched some of them together.
        #expect(stats.jobs >= 1000)
        #expect(stats.batches < stats.jobs)
    }

    /// Submits `count` jobs from concurrent tasks; returns which of them committed.
    func submitConcurrently(
        _ environment: Environment, count: Int, _ job: @escaping @Sendable (Int, WriteTransaction) throws -> Void
    ) async -> [Int: Bool] {
        await withTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        try await environment.writer.submit { txn in try job(index, txn) }
                        return (index, true)
                    } catch {
                        return (index, false)
                    }
                }
            }
            return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
    }

    @Test func aJobThatFailsBeforeWritingFailsAlone() async throws {
        struct Refused: Error {}
        let (environment, database) = try open()
        defer { environment.close() }
        let results = await submitConcurrently(environment, count: 40) { index, txn in
            if index % 4 == 0 { throw Refused() }
            try txn.put(database, BigEndianUInt64(UInt64(index)), [1])
        }
        for index in 0..<40 { #expect(results[index] == (index % 4 != 0)) }
        #expect(try environment.snapshot { try $0.count(database) } == 30)
    }

    @Test func aJobThatFailsAfterWritingIsRolledBackAndTheOthersCommit() async throws {
        struct HalfDone: Error {}
        let (environment, database) = try open()
        defer { environment.close() }
        let outcomes = await submitConcurrently(environment, count: 30) { index, txn in
            try txn.put(database, BigEndianUInt64(UInt64(index)), [2])
            if index == 7 { throw HalfDone() }
        }
        #expect(outcomes[7] == false)
        #expect(outcomes.values.filter { $0 }.count == 29)
        try environment.snapshot { txn throws in
            #expect(try txn.get(database, BigEndianUInt64(7)) == nil)
            #expect(try txn.count(database) == 29)
        }
    }

    @Test func performBlocksUntilCommitted() throws {
        let (environment, database) = try open()
        defer { environment.close() }
        let value = try environment.writer.perform { txn -> Int in
            try txn.put(database, BigEndianUInt64(1), [9, 9])
            return 42
        }
        #expect(value == 42)
        #expect(try environment.snapshot { try $0.get(database, BigEndianUInt64(1)) } == [9, 9])
    }

    @Test("enqueue does not wait; jobs run in the order queued; each completes once its batch committed")
    func enqueuedJobsCompleteInOrderAfterCommit() throws {
        let (environment, database) = try open()
        defer { environment.close() }
        final class Log: Sendable {
            let completed = Mutex<[Int]>([])
            let done = DispatchSemaphore(value: 0)
        }
        let log = Log()
        let jobs = 200
        for index in 0..<jobs {
            environment.writer.enqueue(
                { txn -> Int in
                    // Each job sees every job queued before it: they ran first, in this transaction or an earlier one.
                    let seen = try txn.count(database)
                    if index == 7 { throw LMDBError.notFound }
                    try txn.put(database, BigEndianUInt64(UInt64(index)), [UInt8(truncatingIfNeeded: seen)])
                    return index
                },
                completion: { result in
                    log.completed.withLock { $0.append((try? result.get()) ?? -1) }
                    log.done.signal()
                })
        }
        for _ in 0..<jobs { log.done.wait() }
        #expect(log.completed.withLock { $0 } == (0..<jobs).map { $0 == 7 ? -1 : $0 })
        try environment.snapshot { txn throws in
            #expect(try txn.count(database) == jobs - 1)
            #expect(try txn.get(database, BigEndianUInt64(8)) == [7])
            #expect(try txn.get(database, BigEndianUInt64(199)) == [198])
        }
    }
}
