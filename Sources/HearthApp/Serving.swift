import CoreMetrics
import HearthStore
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

extension HearthServer {
    /// `hearth serve`: builds the application, says what it serves, runs it until SIGTERM or
    /// SIGINT, then drains and stops it, telling systemd at once.
    public static func serve(_ configuration: ServerConfiguration, logger: Logger, metadata: Logger.Metadata = [:]) async throws {
        let application = try buildApplication(configuration, logger: logger)
        logger.info(
            "hearth serve",
            metadata: [
                "profile": "\(configuration.profile)", "project": "\(configuration.projects.defaultProject)",
                "address": "\(configuration.listen.host):\(configuration.listen.port)", "data": "\(configuration.dataDirectory)",
            ].merging(metadata) { $1 })
        let group = ServiceGroup(
            configuration: .init(
                services: [application, ShutdownNotice()], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch StoreError.interrupted {
            // SIGTERM while the projections were catching up: a clean stop, before serving.
            logger.notice("stopped before serving; the projections' catch-up goes on from where it stopped at the next start")
        }
    }

    /// Logging as the settings say (text or JSON lines on stderr, at their level), and
    /// swift-metrics recording into Prometheus's registry, which `/metrics` renders. Once per process.
    public static func bootstrapObservability(_ settings: ObservabilitySettings) -> Logger {
        switch settings.logFormat {
        case .json: LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        case .text: LoggingSystem.bootstrap { label in TextLogHandler(label: label) }
        }
        MetricsSystem.bootstrap(MetricsExposition.factory())
        var logger = Logger(label: "hearth")
        logger.logLevel = settings.logLevel
        return logger
    }
}
