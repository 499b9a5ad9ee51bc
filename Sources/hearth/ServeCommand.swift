import ArgumentParser
import CoreMetrics
import Foundation
import HearthApp
import HearthStore
import Hummingbird
import Logging
import Prometheus

/// `hearth serve`: the Firebase-compatible daemon.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the Firebase Auth API (default: development profile on 127.0.0.1:9099).")

    @Option(help: "A JSON configuration file (default: $HEARTH_CONFIG).")
    var config: String?

    @Option(help: "Address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (default 9099, the Auth Emulator's).")
    var port: Int?

    @OptionGroup var data: DataOptions

    @Option(help: "Default project id (default demo-hearth).")
    var project: String?

    @Flag(
        help: """
            Let the development profile listen off loopback. Anyone who reaches the address is then \
            admin (Bearer owner) and can sign in as anyone: only on a network that is yours alone.
            """)
    var insecureDevelopmentOnNetwork = false

    func run() async throws {
        let configuration = try ServerConfiguration.load(
            file: config ?? environmentValue("HEARTH_CONFIG"), environment: ProcessInfo.processInfo.environment
        ) { configuration in
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            // The config file's dataDirectory, or the environment's, unless --data names one.
            if let directory = data.explicit { configuration.dataDirectory = directory }
            if let project { configuration.project = project }
            if insecureDevelopmentOnNetwork { configuration.insecureDevelopmentOnNetwork = true }
        }
        if environmentValue("HEARTH_LOG_FORMAT") == "json" {
            LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        } else {
            LoggingSystem.bootstrap { label in TextLogHandler(label: label) }
        }
        // Counters and histograms recorded through swift-metrics land in Prometheus's registry,
        // which /metrics renders.
        MetricsSystem.bootstrap(MetricsExposition.factory())
        var logger = Logger(label: "hearth")
        logger.logLevel = environmentValue("HEARTH_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info
        if !Hearth.runsOnEventLoops {
            logger.warning("Swift concurrency could not be moved onto the event loops; serving with a thread hop per request")
        }
        let app = try HearthServer.buildApplication(configuration, logger: logger)
        logger.info(
            "hearth serve",
            metadata: [
                "profile": "\(configuration.profile)", "project": "\(configuration.project)",
                "address": "\(configuration.host):\(configuration.port)", "data": "\(configuration.dataDirectory)",
                "allocator": "\(Allocator.description)",
            ])
        do {
            try await HearthServer.run(app, logger: logger)
        } catch StoreError.interrupted {
            // SIGTERM while the projections were catching up: a clean stop, before serving.
            logger.notice("stopped before serving; the projections' catch-up goes on from where it stopped at the next start")
        }
    }
}
