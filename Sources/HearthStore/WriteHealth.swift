import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether writes are failing for want of disk space: set by a write that fails with ENOSPC
/// (or EDQUOT), cleared by the next write that commits. The daemon reports it (`/readyz`, the
/// log once when it starts and once when it ends); reads are unaffected throughout.
public final class WriteHealth: Sendable {
    private struct State {
        var diskFullSince: Int64?
        var observer: (@Sendable (_ diskFull: Bool) -> Void)?
    }

    private let state = Mutex(State())
    private let clock: @Sendable () -> Int64

    init(clock: @escaping @Sendable () -> Int64) {
        self.clock = clock
    }

    /// Since when (ms) writes have failed on a full disk, or `nil`.
    public var diskFullSince: Int64? { state.withLock { $0.diskFullSince } }

    /// `observer` hears each change of the condition (called outside any lock of the store's).
    public func observe(_ observer: @escaping @Sendable (_ diskFull: Bool) -> Void) {
        state.withLock { $0.observer = observer }
    }

    func record(diskFull: Bool) {
        let now = clock()
        let changed: (@Sendable (Bool) -> Void)? = state.withLock { state in
            guard (state.diskFullSince != nil) != diskFull else { return nil }
            state.diskFullSince = diskFull ? now : nil
            return state.observer
        }
        changed?(diskFull)
    }

    static func isDiskFull(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT
    }
}
