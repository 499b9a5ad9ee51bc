import HearthDomain
import HearthStore

/// A wall clock the scheduler can sleep on: the system's, or a test's manual clock, which
/// wakes sleepers when it is moved (time is injected, so tests move a clock instead of sleeping).
public protocol SleepingClock: WallClock {
    /// Returns at `instant` (Unix ms) or later; throws `CancellationError` when cancelled.
    func sleep(until instant: Int64) async throws
}

extension SystemClock: SleepingClock {
    /// Sleeps at most an hour at a time, so a step of the wall clock (NTP, a suspended VM)
    /// delays a purge by an hour at most.
    public func sleep(until instant: Int64) async throws {
        var remaining = instant - now()
        while remaining > 0 {
            try await Task.sleep(for: .milliseconds(min(remaining, 3_600_000)))
            remaining = instant - now()
        }
    }
}
