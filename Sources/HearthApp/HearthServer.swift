import Foundation
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthLedger
import HearthMail
import HearthStore
import Hummingbird
import Logging
import ServiceLifecycle

/// The composition root of `hearth serve`: the store (ledger writer), signing key, password
/// pool, auth service and HTTP server in one ServiceGroup. On SIGTERM/SIGINT the server stops
/// accepting and drains in-flight requests first; then the store closes, after the writer's
/// last batch committed.
public enum HearthServer {
    public static func buildApplication(
        _ configuration: ServerConfiguration, clock: (any WallClock)? = nil, logger: Logger = Logger(label: "hearth")
    ) throws -> some ApplicationProtocol {
        let lock = try DataDirectoryLock(directory: configuration.dataDirectory, holder: "hearth serve")
        let mailQueue = try configuration.smtp.map { smtp in
            do {
                return MailQueue(client: try SMTPClient(settings: smtp), logger: logger)
            } catch {
                // The TLS context failed to build: the only file it reads is the extra trust roots.
                throw ConfigurationError.invalid("smtpTrustRoots", source: "\(smtp.trustRootsFile ?? "system roots"): \(error)")
            }
        }
        let mailer = mailQueue.map { queue in
            ActionLinkEmailer(
                queue: queue, from: configuration.mailFrom!, fromName: configuration.mailFromName,
                appName: configuration.appName)
        }
        if mailer == nil && configuration.profile == .production {
            logger.notice("no smtpHost: sendOobCode requests from apps will be refused (admin-generated links still work)")
        }
        let service = try makeAuthService(configuration, clock: clock, mailer: mailer)
        let descriptorLimit = ConnectionLimit.raiseDescriptorLimit()
        let (maxConnections, clamped) = ConnectionLimit.cap(
            configured: configuration.maxConnections, descriptorLimit: descriptorLimit,
            openNow: ConnectionLimit.openDescriptors())
        if clamped {
            logger.warning(
                "maxConnections lowered to what the descriptor limit allows",
                metadata: ["configured": "\(configuration.maxConnections ?? 0)", "maxConnections": "\(maxConnections)"])
        }
        logger.info("connections", metadata: ["maxConnections": "\(maxConnections)", "descriptorLimit": "\(descriptorLimit)"])
        if configuration.servesDevelopmentOffLoopback {
            logger.warning(
                "INSECURE: the development profile is listening off loopback: anyone who reaches \(configuration.host) is admin (Bearer owner), signs in with unsigned custom tokens and wipes accounts",
                metadata: ["option": "insecureDevelopmentOnNetwork"])
        }
        let router = HearthRouter.build(service: service, access: configuration.access)
        // Services stop in reverse order after the server drains: the mail queue gets the links
        // of the last requests, then the store closes.
        var services: [any Service] = [StoreService(store: service.store, lock: lock, logger: logger)]
        if let mailQueue { services.append(mailQueue) }
        let app = Application(
            router: router,
            server: HearthRouter.server(
                idleTimeout: .seconds(configuration.idleTimeoutSeconds), requestTimeLimit: configuration.requestTimeLimit),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "hearth",
                availableConnectionsDelegate: CappedConnections(maximum: maxConnections, logger: logger)),
            services: services,
            onServerRunning: { _ in SystemdNotifier.notify("READY=1") },
            logger: logger)
        return app
    }

    /// The auth service over a store in the configured data directory.
    public static func makeAuthService(
        _ configuration: ServerConfiguration, clock: (any WallClock)? = nil, mailer: (any ActionLinkMailer)? = nil
    ) throws -> AuthService {
        var options = AccountStore.Options()
        if let clock { options.clock = clock }
        let store = try AccountStore(directory: configuration.dataDirectory, options: options)
        let key = try SigningKey.loadOrCreate(in: configuration.dataDirectory, algorithm: configuration.signingAlgorithm)
        let parameters = PasswordHasher.Parameters(
            logN: configuration.scryptLogN, blockSize: configuration.scryptBlockSize,
            parallelization: configuration.scryptParallelization)
        var settings = AuthSettings()
        settings.fakeIdentityProvider = configuration.profile == .development
        settings.customTokens = try configuration.customTokenVerifier()
        settings.actionURL = configuration.actionUrl
        return AuthService(
            store: store, tokens: TokenIssuer(key: key),
            passwords: PasswordHasher(
                parameters: parameters, pool: WorkPool(threads: configuration.hashThreads, name: "hearth-scrypt")),
            outbox: configuration.profile == .development ? Outbox() : nil, mailer: mailer, settings: settings)
    }
}

/// Keeps the store (and the data-directory lock) open while the server runs; closes it at
/// shutdown, after the HTTP server has drained (services stop in reverse order).
struct StoreService: Service {
    let store: AccountStore
    let lock: DataDirectoryLock
    let logger: Logger

    func run() async throws {
        let head = try store.ledgerHead()
        logger.info("ledger open", metadata: ["head": "\(head.sequence)"])
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
        store.close()
        logger.info("ledger closed")
        withExtendedLifetime(lock) {}
    }
}
