import Synchronization

/// What is fetched from providers (discovery documents, key sets), shared by concurrent callers:
/// one fetch per key at a time, and a failed fetch remembered for a few seconds, so neither a
/// burst of sign-ins nor a provider that is down costs one outbound call per request.
final class FetchCache<Value: Sendable>: Sendable {
    struct Fetched: Sendable {
        var value: Value
        var at: Int64
    }

    private struct Entry {
        var last: Fetched?
        var failure: (error: any Error, at: Int64)?
        var inFlight: Task<Value, any Error>?
    }

    private let entries = Mutex<[String: Entry]>([:])
    let failureLifetime: Int64

    init(failureLifetime: Int64 = 5_000) {
        self.failureLifetime = failureLifetime
    }

    func last(_ key: String) -> Fetched? {
        entries.withLock { $0[key]?.last }
    }

    /// A new value for `key`, from the fetch under way if there is one.
    func fetch(_ key: String, now: Int64, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task: Task<Value, any Error> = try entries.withLock { entries in
            var entry = entries[key] ?? Entry()
            if let failure = entry.failure, now - failure.at < failureLifetime { throw failure.error }
            if let running = entry.inFlight { return running }
            let started = Task { try await body() }
            entry.inFlight = started
            entries[key] = entry
            return started
        }
        let result = await task.result
        entries.withLock { entries in
            guard entries[key]?.inFlight == task else { return }
            entries[key]?.inFlight = nil
            switch result {
            case .success(let value):
                entries[key]?.last = Fetched(value: value, at: now)
                entries[key]?.failure = nil
            case .failure(let error): entries[key]?.failure = (error, now)
            }
        }
        return try result.get()
    }
}
