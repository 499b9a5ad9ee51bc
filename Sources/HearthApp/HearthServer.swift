import Foundation
import HearthAuth
import HearthCluster
import HearthDomain
import HearthHTTP
import HearthMail
import HearthOAuth
import HearthScheduler
import HearthStore
import HearthWire
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// The composition root of `hearth serve`: the store (ledger writer), signing key, password
/// pool, auth service and HTTP server in one ServiceGroup. The data directory is locked, then
/// opened; the projections catch up to the ledger before the server accepts a connection, inside
/// the group, so a signal stops that too. On SIGTERM/SIGINT the server stops accepting and
/// drains in-flight requests first; then the store closes, after the writer's last batch
/// committed.
public enum HearthServer {
    /// The application `hearth serve` runs.
    static func buildApplication(
        _ configuration: ServerConfiguration, logger: Logger = Logger(label: "hearth")
    ) throws -> some ApplicationProtocol {
        try assemble(configuration, logger: logger).application
    }

    /// What `assemble` built: the application, and the auth context it serves (the tests reach
    /// the store and the development outbox through it).
    public struct Assembly: Sendable {
        public let application: Application<RouterResponder<HearthRequestContext>>
        public let context: AuthContext
    }

    /// The one way the server is put together, for `serve` and for the tests, which may bring a
    /// clock and a mailer of their own.
    public static func assemble(
        _ configuration: ServerConfiguration, clock: any SleepingClock = SystemClock(),
        mailer testMailer: (any ActionLinkMailer)? = nil, logger: Logger = Logger(label: "hearth")
    ) throws -> Assembly {
        let directory = DataDirectory(configuration.dataDirectory)
        var options = AccountStore.Options()
        options.clock = clock
        // Locked and opened, but not caught up: that runs before the server starts, below.
        let store = try directory.open(as: "hearth serve", options: options, catchUp: false)
        do {
            return try assemble(configuration, store: store, clock: clock, mailer: testMailer, logger: logger)
        } catch {
            store.close()
            throw error
        }
    }

    /// `assemble` on a store already open; `onListening` is told the port once the server
    /// listens (a benchmark's servers on port 0).
    static func assemble(
        _ configuration: ServerConfiguration, store: AccountStore, clock: any SleepingClock,
        mailer testMailer: (any ActionLinkMailer)?, logger: Logger, onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws -> Assembly {
        let mailQueue = try configuration.mail.smtp.map { smtp in
            do {
                return MailQueue(client: try SMTPClient(settings: smtp), logger: logger)
            } catch {
                // The TLS context failed to build: the only file it reads is the extra trust roots.
                throw ConfigurationError.invalid("smtpTrustRoots", source: "\(smtp.trustRootsFile ?? "system roots"): \(error)")
            }
        }
        let mailer =
            testMailer
            ?? mailQueue.map { queue in
                ActionLinkEmailer(
                    queue: queue, from: configuration.mail.from!, fromName: configuration.mail.fromName,
                    appName: configuration.mail.appName)
            }
        if mailer == nil && configuration.profile == .production {
            logger.notice("no smtpHost: sendOobCode requests from apps will be refused (admin-generated links still work)")
        }
        let context = try authContext(configuration, store: store, mailer: mailer, logger: logger)
        let descriptorLimit = ConnectionLimit.raiseDescriptorLimit()
        let (maxConnections, clamped) = ConnectionLimit.cap(
            configured: configuration.limits.maxConnections, descriptorLimit: descriptorLimit,
            openNow: ConnectionLimit.openDescriptors())
        if clamped {
            logger.warning(
                "maxConnections lowered to what the descriptor limit allows",
                metadata: ["configured": "\(configuration.limits.maxConnections ?? 0)", "maxConnections": "\(maxConnections)"])
        }
        let governor = ConnectionGovernor(limits: configuration.connectionLimits(maxConnections: maxConnections))
        logger.info(
            "connections",
            metadata: [
                "maxConnections": "\(maxConnections)", "descriptorLimit": "\(descriptorLimit)",
                "maxConnectionsPerAddress": "\(governor.limits.perAddress)",
                "maxBufferedRequestBytes": "\(governor.limits.bufferedBytes)",
            ])
        if configuration.listen.servesDevelopmentOffLoopback {
            logger.warning(
                "INSECURE: the development profile is listening off loopback: anyone who reaches \(configuration.listen.host) is admin (Bearer owner), signs in with unsigned custom tokens and wipes accounts",
                metadata: ["option": "insecureDevelopmentOnNetwork"])
        }
        if try store.holdsUnsealedRecords() {
            logger.warning(
                "the ledger holds personal data in plain text, written before per-account keys: stop the daemon and run hearth ledger seal",
                metadata: ["data": "\(configuration.dataDirectory)"])
        }
        if configuration.listen.servesPlainHTTPOffLoopback {
            logger.warning(
                "INSECURE: serving plain HTTP on \(configuration.listen.host): passwords and tokens cross the network unencrypted unless only your TLS proxy reaches this address",
                metadata: ["option": "insecurePlainHttpOnNetwork"])
        }
        // The cleanup scheduler starts once the projections caught up (an upgrade not yet folded
        // in must not make an account look due).
        let caughtUp = StartSignal()
        let declaredProjects = configuration.projects.declared
        let cluster = configuration.cluster.map { cluster in
            logger.notice(
                "cluster mode (docs/cluster.md)",
                metadata: [
                    "cluster": "\(cluster.name)", "node": "\(cluster.node)", "synchronousFollowers": "\(cluster.synchronousFollowers)",
                ])
            return ClusterNode(cluster, store: store, caughtUp: caughtUp, declaredProjects: declaredProjects, logger: logger)
        }
        var access = configuration.access
        if let token = configuration.cluster?.replicationToken { access.trustForwarding(by: token) }
        let router = HearthRouter.build(
            services: AuthServices(context: context), access: access, publicURL: configuration.listen.publicURL,
            readiness: { await Readiness.checks(store: store, caughtUp: caughtUp, cluster: cluster?.state) },
            metrics: {
                MetricsExposition.render(
                    registry: PrometheusMetricsFactory.defaultRegistry, store: store, passwords: context.passwords, mailQueue: mailQueue,
                    connections: governor, cluster: cluster?.state)
            }, forwarding: configuration.cluster.flatMap { settings in cluster?.forwarding(token: settings.replicationToken) })
        cluster?.addRoutes(to: router)
        MetricsExposition.observeWriter(of: store)
        store.writeHealth.observe { diskFull in
            if diskFull {
                logger.error("the data directory's disk is full: writes are refused (503 UNAVAILABLE) until space is freed; reads go on")
            } else {
                logger.notice("disk space returned: writes are accepted again")
            }
        }
        let scheduler = CleanupScheduler(
            store: store, clock: clock, startsAfter: caughtUp, batchSize: configuration.cleanup.batchSize, logger: logger)
        // Services stop in reverse order after the server drains: the scheduler between two
        // batches, the mail queue after sending the links of the last requests, the store, then
        // the signing and hashing threads.
        var services: [any Service] = [WorkersService(context: context), StoreService(store: store, logger: logger)]
        if let mailQueue { services.append(mailQueue) }
        services.append(scheduler)
        services.append(ActionCodeSweeper(store: store, clock: clock, startsAfter: caughtUp, logger: logger))
        services.append(
            SigningKeyService(
                keys: KeyService(context: context), keyring: context.tokens.keyring, store: store, startsAfter: caughtUp,
                fetch: cluster?.fetchSigningKey, logger: logger))
        if let cluster { services += cluster.services }
        if let interval = WatchdogService.interval() {
            services.append(WatchdogService(store: store, interval: interval, logger: logger))
        }
        var application = Application(
            router: router,
            server: HearthRouter.server(
                idleTimeout: .seconds(configuration.limits.idleTimeoutSeconds), requestTimeLimit: configuration.requestTimeLimit,
                governor: governor),
            configuration: .init(
                address: .hostname(configuration.listen.host, port: configuration.listen.port), serverName: "hearth",
                availableConnectionsDelegate: CappedConnections(maximum: maxConnections, logger: logger)),
            services: services,
            onServerRunning: { channel in
                SystemdNotifier.notify("READY=1")
                if let port = channel.localAddress?.port { onListening(port) }
            },
            logger: logger)
        let operatorNames = Set(configuration.secrets.adminCredentials.filter { $0.scope == .everyProject }.map(\.recordedName))
            .union(configuration.profile == .development ? ["owner"] : [])
        application.beforeServerStarts {
            try await StoreService.catchUp(store, logger: logger)
            if cluster == nil { try await ProjectSeeding.seed(declaredProjects, into: store, logger: logger) }
            try SecretFileAudit.check(store, declared: declaredProjects, operators: operatorNames, logger: logger)
            caughtUp.open()
        }
        return Assembly(application: application, context: context)
    }

    /// The auth context over `store`: signing key from the data directory, password pool,
    /// settings of the profile.
    private static func authContext(
        _ configuration: ServerConfiguration, store: AccountStore, mailer: (any ActionLinkMailer)?, logger: Logger
    ) throws -> AuthContext {
        let keyFile = store.directory.signingKeyFile(algorithm: configuration.secrets.signingAlgorithm.rawValue)
        let keyring = SigningKeyring(original: try SigningKey.loadOrCreate(at: keyFile, algorithm: configuration.secrets.signingAlgorithm))
        // The keys a rotation published, before the first token is signed.
        try keyring.refresh(from: store)
        var settings = AuthSettings()
        settings.fakeIdentityProvider = configuration.profile == .development
        settings.emailTrust = configuration.profile == .development ? .anyVerifiedEmail : .authoritativeProviders
        settings.secretFilesDirectory = configuration.providers.secretFilesDirectory
        settings.serverHosts = Set([configuration.listen.publicURL.flatMap { URL(string: $0)?.host?.lowercased() }].compactMap { $0 })
        settings.registeredAppsOnly = configuration.profile == .production
        settings.customTokens = configuration.secrets.customTokens
        settings.actionURL = configuration.mail.actionURL
        settings.recentSignIn = configuration.projects.recentSignIn
        settings.strictActionCodeSettings = configuration.profile == .production
        settings.oobCodeLifetimes = configuration.mail.actionCodeLifetimes
        settings.onProviderFailure = { report in
            var metadata: Logger.Metadata = [
                "project": "\(report.project)", "provider": "\(report.providerId)", "reason": "\(report.failure)",
            ]
            if let requestId = report.requestId { metadata["requestId"] = "\(requestId)" }
            if report.clientIp != nil {
                metadata["client"] = "\(configuration.observability.logClientAddresses.render(report.clientIp))"
            }
            logger.warning("identity provider call failed", metadata: metadata)
        }
        settings.onUnrecordedActionCode = { project, requestId, error in
            var metadata: Logger.Metadata = ["project": "\(project)", "error": "\(error)"]
            if let requestId { metadata["requestId"] = "\(requestId)" }
            logger.error("an action code answered before its write was not recorded: no email was sent", metadata: metadata)
        }
        let clock = store.clock
        let gateway = OAuthGateway(
            endpoints: configuration.providers.endpoints, network: configuration.providers.network,
            timeoutSeconds: Int64(configuration.providers.timeoutSeconds), clock: { clock.now() })
        // RS256 signs on threads of its own, one per core, not on the event loops: under a
        // saturating sign-up load, a cheap request (a lookup) is then answered at once instead of
        // waiting behind the signatures queued on its loop (Benchmarks/api.py measures both).
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let signing =
            configuration.secrets.signingAlgorithm == .rs256 ? WorkPool(threads: cores, name: "hearth-sign", maxQueued: 1024 * cores) : nil
        let policy = configuration.limits.abuse
        let hashing = WorkPool(
            threads: configuration.passwords.hashThreads, name: "hearth-scrypt", maxQueuedPerClient: policy?.hashQueuePerAddress)
        let refusals = RefusalLog(
            logger: logger, addresses: configuration.observability.logClientAddresses, clock: { clock.now() })
        let context = AuthContext(
            store: store, tokens: TokenIssuer(keyring: keyring, signingPool: signing),
            passwords: PasswordHasher(parameters: configuration.passwords.parameters, pool: hashing),
            outbox: configuration.profile == .development ? Outbox() : nil, mailer: mailer, identityProviders: gateway,
            settings: settings, limits: policy.map { AbuseGuard(policy: $0, onRefusal: refusals.record) })
        // The secrets key is made at the first start, with the signing key, not at its first
        // use: a node that joins a cluster then copies it (`hearth cluster join`), and what one
        // leader sealed or tagged (secrets, second factors, refresh tokens) opens on the next.
        try context.secrets.prepare()
        return context
    }
}
