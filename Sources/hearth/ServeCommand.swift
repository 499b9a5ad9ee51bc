import ArgumentParser
import Foundation
import HearthApp
import Logging

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
        ) { settings in
            if let host { settings.listen.host = host }
            if let port { settings.listen.port = port }
            // The config file's dataDirectory, or the environment's, unless --data names one.
            if let directory = data.explicit { settings.dataDirectory = directory }
            if let project { settings.projects.project = project }
            if insecureDevelopmentOnNetwork { settings.listen.insecureDevelopmentOnNetwork = true }
        }
        let logger = HearthServer.bootstrapObservability(configuration.observability)
        if !Hearth.runsOnEventLoops {
            logger.warning("Swift concurrency could not be moved onto the event loops; serving with a thread hop per request")
        }
        try await HearthServer.serve(configuration, logger: logger, metadata: ["allocator": "\(Allocator.description)"])
    }
}
