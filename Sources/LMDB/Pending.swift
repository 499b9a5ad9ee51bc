/// A result one thread delivers once and others wait for: a job the writer thread commits, a
/// pipeline stage's end, the writer's own exit. Any number of threads may wait, any number of
/// times.
///
/// `@unchecked Sendable`: `result` is guarded by the lock. For a `T` that is not `Sendable`
/// (`Writer.perform`), the one delivering hands the value over and keeps no reference to it.
public final class Pending<T>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var result: Result<T, any Error>?

    public init() {}

    public func deliver(_ result: Result<T, any Error>) {
        lock.withLock {
            if self.result != nil { preconditionFailure("a Pending result is delivered once") }
            self.result = result
            lock.broadcast()
        }
    }

    /// Waits for the result and returns it (rethrowing its error).
    public func value() throws -> T {
        try lock.withLock {
            while true {
                if let result { return result }
                lock.wait()
            }
        }.get()
    }

    /// Waits for the result, whatever it is.
    public func wait() {
        _ = try? value()
    }
}
