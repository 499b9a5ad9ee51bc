import HearthDomain
import Synchronization

/// A wall clock that moves only when told: tests of expiry and the 30-day cleanup move it
/// instead of sleeping (DESIGN rule 5).
public final class ManualClock: WallClock {
    private let current: Mutex<Int64>

    /// Starts at 2026-01-01T00:00:00Z unless told otherwise.
    public init(_ start: Int64 = 1_767_225_600_000) { current = Mutex(start) }

    public func now() -> Int64 { current.withLock { $0 } }

    public func advance(milliseconds: Int64) { current.withLock { $0 += milliseconds } }

    public func advance(days: Int64) { advance(milliseconds: days * 86_400_000) }
}
