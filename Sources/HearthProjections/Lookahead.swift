import Dispatch
import LMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of its own that produces `count` items in order, at most `depth` ahead of the
/// thread that consumes them: a stage of the catch-up pipeline (decoding chunks of events).
///
/// A thread, not Dispatch's global queue: its pool is sized to the cores and does not count
/// the threads that block outside it (the caller, the writer), so it could leave a core idle.
final class Lookahead<Item: Sendable>: Sendable {
    private struct Buffer {
        var items: [Result<Item, any Error>] = []
        var stopped = false
    }

    private let ready = DispatchSemaphore(value: 0)
    private let space = DispatchSemaphore(value: 0)
    private let buffer = Mutex(Buffer())
    private let finished = Pending<Void>()

    /// Starts producing `produce(0)`, `produce(1)`, … `produce(count - 1)`; an error ends it.
    /// A positive `niceness` lowers the thread's priority, for a stage whose items have slack.
    init(count: Int, depth: Int, niceness: Int32 = 0, _ produce: @escaping @Sendable (Int) throws -> Item) {
        // Created empty and then filled: Dispatch traps if a semaphore is freed below the value it was created with.
        for _ in 0..<depth { space.signal() }
        let body = ThreadBody { [self] in
            #if os(Linux)
            // A nice value is per thread on Linux, and 0 names the calling one.
            if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
            #endif
            for index in 0..<count {
                // Room first, then work: never more than `depth` items ahead, and a stop is
                // seen before another item is started.
                space.wait()
                guard !buffer.withLock({ $0.stopped }) else { break }
                // Handed over, not copied: a reference this thread still held once the consumer
                // took the item would make its first change copy it (a chunk's every event).
                var item: Result<Item, any Error>? = Result { try produce(index) }
                let failed = if case .failure? = item { true } else { false }
                buffer.withLock { $0.items.append(item.take()!) }
                ready.signal()
                if failed { break }
            }
            finished.deliver(.success(()))
        }
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(body).toOpaque())
        precondition(created == 0, "cannot start a pipeline thread")
        pthread_detach(thread)
    }

    /// The next item, in order (rethrowing its error); call at most `count` times.
    func next() throws -> Item {
        ready.wait()
        let item = buffer.withLock { $0.items.removeFirst() }
        space.signal()
        switch consume item {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Stops producing (after the item in hand, if any) and waits until the thread is done with
    /// `produce`: it may be reading an environment the caller closes next.
    func stop() {
        buffer.withLock { $0.stopped = true }
        space.signal()
        finished.wait()
    }
}

private final class ThreadBody {
    let run: () -> Void

    init(_ run: @escaping () -> Void) { self.run = run }
}
