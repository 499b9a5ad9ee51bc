import Foundation
import HearthStore
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// systemd's watchdog (`WatchdogSec=`): every half period, an empty job through the writer, and
/// `WATCHDOG=1` only when it committed, so the ping proves the writer alive, not just a timer.
/// A writer stuck past the period gets no ping, and systemd restarts the service.
struct WatchdogService: Service {
    let store: AccountStore
    let interval: Duration
    let logger: Logger

    /// The half period systemd asked for (`WATCHDOG_USEC`, for this process), or `nil`.
    static func interval(environment: [String: String] = ProcessInfo.processInfo.environment) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != getpid() { return nil }
        return .microseconds(microseconds / 2)
    }

    func run() async throws {
        logger.info("systemd watchdog on", metadata: ["pingEvery": "\(interval)"])
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if await writerCommits() { SystemdNotifier.notify("WATCHDOG=1") }
                try? await Task.sleep(for: interval)
            }
        }
    }

    private func writerCommits() async -> Bool {
        do {
            try await store.probeWriter(within: interval)
            return true
        } catch {
            logger.warning("watchdog: the writer did not commit; no ping", metadata: ["error": "\(error)"])
            return false
        }
    }
}
