import ArgumentParser
import Foundation
import HearthApp
import HearthBridge
import Logging
import NIOCore
import NIOPosix
import UnixSignals

/// `hearth bridge`: the app's loopback bridge as a sidecar for the Admin SDKs on a server
/// (`FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:PORT`), which speak plain HTTP in emulator mode.
struct Bridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forward plain HTTP on a loopback port to Hearth over verified TLS (for the Admin SDKs).",
        discussion: """
            Listens on loopback only and forwards only to --upstream, verifying its certificate against \
            the system's CAs (or --ca-file's) and, with --pin-sha256, its public key. Prints the address \
            it listens on when ready (and tells systemd READY=1); SIGTERM or SIGINT stop it.
            """)

    @Option(help: "The loopback address and port to listen on: 127.0.0.1:PORT or [::1]:PORT (port 0: the system picks).")
    var listen: String

    @Option(help: "Hearth over TLS: https://auth.example.com (a path prefix is kept).")
    var upstream: String

    @Option(help: "A PEM file of the CAs to trust instead of the system's (a private CA).")
    var caFile: String?

    @Option(
        name: .customLong("pin-sha256"),
        help: "A base64 SHA-256 digest of the upstream certificate's SubjectPublicKeyInfo it must carry (repeat for a backup key).")
    var pins: [String] = []

    @Option(
        help: """
            A file holding an admin token (adminTokens), sent in place of the `Bearer owner` the Admin SDKs \
            send in emulator mode. Any local user who reaches the port is then that admin: name who may \
            with --allow-uid.
            """)
    var adminTokenFile: String?

    @Option(
        name: .customLong("allow-uid"),
        help: "With --admin-token-file: a uid whose connections are served (repeat; default: any local user).")
    var allowedUsers: [UInt32] = []

    @Option(help: "Client connections served at once.")
    var maxConnections = 1024

    @Option(help: "Connections to the upstream at once; further requests wait their turn (10 s at most).")
    var maxUpstreamConnections = 64

    @Option(help: "Event loop threads (one carries about 7,000 requests a second on this project's 2-core test machine).")
    var threads = 1

    func run() async throws {
        var configuration: BridgeConfiguration
        do {
            let (host, port) = try Self.loopbackAddress(listen)
            configuration = BridgeConfiguration(upstream: try Upstream(upstream))
            configuration.listenHost = host
            configuration.listenPort = port
            configuration.pins = try pins.map(SPKIPin.init)
            if let caFile { configuration.trust = .certificates(pemFile: caFile) }
        } catch let error as BridgeError {
            throw ValidationError(error.description)
        }
        if let adminTokenFile {
            guard let data = FileManager.default.contents(atPath: adminTokenFile),
                let token = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty
            else { throw ValidationError("can not read an admin token from \(adminTokenFile)") }
            configuration.emulatorAdmin = EmulatorAdmin(token: token, allowedUsers: Set(allowedUsers))
        } else if !allowedUsers.isEmpty {
            throw ValidationError("--allow-uid restricts who uses --admin-token-file; without a token there is nothing to restrict")
        }
        configuration.maxClientConnections = maxConnections
        configuration.maxUpstreamConnections = maxUpstreamConnections
        configuration.threads = max(1, threads)
        LoggingSystem.bootstrap { label in TextLogHandler(label: label) }
        configuration.logger = Logger(label: "hearth.bridge")
        configuration.logger.logLevel = environmentValue("HEARTH_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info

        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let bridge: HearthBridge
        do {
            bridge = try await HearthBridge.start(configuration)
        } catch let error as BridgeError {
            throw ValidationError(error.description)
        }
        // Unbuffered: a supervisor or a test reads the port from this line as soon as it is written.
        FileHandle.standardOutput.write(
            Data("hearth bridge listening on \(bridge.url.absoluteString), forwarding to \(configuration.upstream)\n".utf8))
        SystemdNotifier.notify("READY=1")
        for await _ in signals { break }
        SystemdNotifier.notify("STOPPING=1")
        await bridge.stop()
    }

    /// `127.0.0.1:PORT` or `[::1]:PORT`, split (the bridge refuses a host off loopback before
    /// a socket opens).
    static func loopbackAddress(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ValidationError("--listen takes HOST:PORT, e.g. 127.0.0.1:9100, not \(text)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }
}
