import Foundation
import HummingbirdCore
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections `hearth serve` holds at once, so that clients can never take the last
/// file descriptors. Running out is not only refused connections: `Task.sleep` (Hummingbird's
/// once-a-second date timer among others) runs through libdispatch even with the event-loop
/// executor, and libdispatch's worker-pool monitor, when its once-a-second tick finds work
/// queued, opens `/proc/<tid>/stat` of each worker and traps if that fails. At the cap,
/// the listener stops accepting (Hummingbird's accept backpressure): new clients wait in the
/// kernel's backlog until a connection closes.
public enum ConnectionLimit {
    /// Descriptors kept out of the connections' reach: LMDB's files, the data-directory lock, the
    /// signing key, SMTP connections, libdispatch's `/proc` reads, with room to spare, and about
    /// three per event loop (epoll, eventfd, timerfd) in case the loops start after the count.
    public static let reserve = 64 + 4 * ProcessInfo.processInfo.activeProcessorCount

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (the kernel allows any process that)
    /// and returns the limit now in force.
    public static func raiseDescriptorLimit() -> Int {
        #if os(Linux)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY (all ones) clamps to Int.max
    }

    /// Descriptors this process has open now.
    public static func openDescriptors() -> Int {
        #if os(Linux)
        let directory = "/proc/self/fd"
        #else
        let directory = "/dev/fd"
        #endif
        return (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? 0
    }

    /// The cap: what the descriptor limit leaves after those open now and the reserve, or the
    /// configured `maxConnections` when that fits under it.
    public static func cap(configured: Int?, descriptorLimit: Int, openNow: Int) -> (cap: Int, clamped: Bool) {
        let room = max(1, descriptorLimit - openNow - reserve)
        guard let configured else { return (room, false) }
        return configured > room ? (room, true) : (configured, false)
    }
}

/// Counts open connections for the listener and stops accepts at the cap; says so in the log
/// when the cap is reached, at most once a minute, and when accepting resumes.
struct CappedConnections: AvailableConnectionsDelegate {
    let maximum: Int
    let logger: Logger
    private var open = 0
    private var saturated = false
    private var lastWarning: ContinuousClock.Instant?

    init(maximum: Int, logger: Logger) {
        self.maximum = maximum
        self.logger = logger
    }

    mutating func connectionOpened() {
        open += 1
        guard open >= maximum, !saturated else { return }
        saturated = true
        let now = ContinuousClock.now
        if lastWarning.map({ now - $0 > .seconds(60) }) ?? true {
            lastWarning = now
            logger.warning(
                "connection limit reached: new connections wait in the listen backlog until one closes",
                metadata: ["maxConnections": "\(maximum)"])
        }
    }

    mutating func connectionClosed() {
        open -= 1
        if saturated && open < maximum {
            saturated = false
            logger.debug("accepting connections again", metadata: ["open": "\(open)"])
        }
    }

    func isAcceptingNewConnections() -> Bool {
        open < maximum
    }
}
