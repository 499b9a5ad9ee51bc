import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

/// Tells systemd `STOPPING=1` the moment a shutdown begins, before the HTTP server drains
/// (which may take as long as the slowest request in flight): services stop in reverse order,
/// and this one comes after the application.
struct ShutdownNotice: Service {
    func run() async throws {
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
    }
}
