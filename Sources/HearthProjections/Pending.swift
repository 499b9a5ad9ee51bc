import Dispatch

/// A result another thread delivers later (a write the writer thread commits, a stage's end).
///
/// `@unchecked Sendable`: `result` is written once, before the semaphore is signalled, and
/// read only after waiting on it.
final class Pending<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    func deliver(_ result: Result<T, any Error>) {
        self.result = result
        done.signal()
    }

    /// Waits for the result; may be called any number of times.
    func wait() {
        done.wait()
        done.signal()
    }

    func value() throws -> T {
        wait()
        return try result!.get()
    }
}
