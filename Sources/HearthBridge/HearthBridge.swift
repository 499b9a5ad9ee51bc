import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A loopback bridge for the Firebase SDKs' emulator mode: they speak plain HTTP to
/// `127.0.0.1:<port>`, the bridge carries each request to Hearth over verified TLS.
///
/// ```swift
/// let bridge = try await HearthBridge.start(upstream: URL(string: "https://auth.example.com")!)
/// Auth.auth().useEmulator(withHost: "127.0.0.1", port: bridge.port)
/// ```
///
/// It listens on loopback only, on a port the system picks (kept across `suspend()` and
/// `resume()`, since the SDK was told it once), answers only requests whose `Host` is that
/// address, and forwards to its one upstream, nowhere else.
public final class HearthBridge: Sendable {
    public let configuration: BridgeConfiguration
    private let transport: any BridgeTransport
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<UpstreamPool>]
    private let lifecycle = NIOLockedValueBox<LifecycleFollower?>(nil)
    private let state = NIOLockedValueBox(Listening())

    private struct Listening {
        var port: Int?
        var listener: (any Channel)?
        var clients: [ObjectIdentifier: any Channel] = [:]
        var stopped = false
    }

    /// The port the SDK is pointed at.
    public var port: Int { state.withLockedValue { $0.port } ?? configuration.listenPort }

    /// `http://127.0.0.1:<port>`, for clients that take a URL.
    public var url: URL {
        let host = configuration.listenHost.contains(":") ? "[\(configuration.listenHost)]" : configuration.listenHost
        return URL(string: "http://\(host):\(port)")!
    }

    /// Starts a bridge to `upstream` (https) with the system's trust store and, optionally,
    /// SPKI pins (base64 SHA-256).
    public static func start(upstream: URL, pins: [String] = []) async throws -> HearthBridge {
        try await start(try configuration(upstream: upstream, pins: pins))
    }

    public static func start(_ configuration: BridgeConfiguration) async throws -> HearthBridge {
        let bridge = try HearthBridge(configuration: configuration)
        do {
            try await bridge.resume()
        } catch {
            await bridge.transport.shutdown()
            throw error
        }
        bridge.followLifecycle()
        return bridge
    }

    /// `start` for code that can not await, such as `application(_:didFinishLaunchingWithOptions:)`,
    /// where the SDK must be pointed at the bridge before anything else uses Auth. It binds a
    /// loopback socket and starts a thread: milliseconds.
    @available(*, noasync, message: "use start(upstream:pins:) from async code")
    public static func startBlocking(upstream: URL, pins: [String] = []) throws -> HearthBridge {
        try startBlocking(try configuration(upstream: upstream, pins: pins))
    }

    @available(*, noasync, message: "use start(_:) from async code")
    public static func startBlocking(_ configuration: BridgeConfiguration) throws -> HearthBridge {
        let bridge = try HearthBridge(configuration: configuration)
        do {
            try bridge.bind(port: configuration.listenPort).wait()
        } catch {
            try? bridge.transport.group.syncShutdownGracefully()
            throw error
        }
        bridge.followLifecycle()
        return bridge
    }

    private static func configuration(upstream: URL, pins: [String]) throws -> BridgeConfiguration {
        var configuration = BridgeConfiguration(upstream: try Upstream(url: upstream))
        configuration.pins = try pins.map(SPKIPin.init)
        return configuration
    }

    private init(configuration: BridgeConfiguration) throws {
        try configuration.validate()
        #if canImport(Network)
        let transport = try NetworkTransport(configuration: configuration)
        #else
        let transport = try PosixTransport(configuration: configuration)
        #endif
        let loops = Array(transport.group.makeIterator())
        // Each loop serves its own clients' requests over its own upstream connections.
        let settings = UpstreamPool.Settings(
            limit: max(1, configuration.maxUpstreamConnections / loops.count), idleTimeout: configuration.upstreamIdleTimeout,
            queueTimeout: configuration.queueTimeout, responseTimeout: configuration.responseTimeout)
        var pools: [ObjectIdentifier: NIOLoopBoundBox<UpstreamPool>] = [:]
        for loop in loops {
            pools[ObjectIdentifier(loop)] = NIOLoopBoundBox.makeBoxSendingValue(
                UpstreamPool(eventLoop: loop, transport: transport, settings: settings), eventLoop: loop)
        }
        self.configuration = configuration
        self.transport = transport
        self.pools = pools
    }

    /// Listens again (on the same port) after `suspend()`: when the app returns to the foreground.
    public func resume() async throws {
        let (port, stopped, listening) = state.withLockedValue { ($0.port, $0.stopped, $0.listener != nil) }
        guard !stopped else { throw BridgeError.invalidSetting("the bridge was stopped") }
        guard !listening else { return }
        // Connections pooled before the background may have died meanwhile (their idle timers
        // do not run while the app is suspended): none is reused.
        for pool in pools.values {
            try? await pool.eventLoop.submit { pool.value.closeIdle() }.get()
        }
        try await bind(port: port ?? configuration.listenPort).get()
    }

    private func bind(port: Int) -> EventLoopFuture<Void> {
        transport.listen(
            host: configuration.listenHost, port: port, backlog: 256,
            childInitializer: { [self] channel in accept(channel) }
        ).map { [self] listener in
            state.withLockedValue {
                $0.listener = listener
                $0.port = listener.localAddress?.port ?? port
            }
            configuration.logger.debug("listening", metadata: ["port": "\(self.port)", "upstream": "\(configuration.upstream)"])
        }
    }

    /// Suspends and resumes with the app (`BridgeConfiguration.lifecycle`), in the order the
    /// notifications came.
    private func followLifecycle() {
        guard let names = configuration.lifecycle else { return }
        lifecycle.withLockedValue { $0 = LifecycleFollower(bridge: self, names: names) }
    }

    /// Stops listening and closes every connection, keeping the port and the threads: when the
    /// app goes to the background (iOS reclaims listening sockets of suspended apps).
    public func suspend() async {
        // The listener first, so that no connection is accepted after the clients are listed.
        let listener = state.withLockedValue { state in
            defer { state.listener = nil }
            return state.listener
        }
        try? await listener?.close()
        let clients = state.withLockedValue { state in
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
        for client in clients { try? await client.close() }
        for pool in pools.values {
            try? await pool.eventLoop.submit { pool.value.closeIdle() }.get()
        }
    }

    /// Stops for good: connections closed, threads ended.
    public func stop() async {
        // Stopped first: a foreground notification still queued can not listen again.
        let already = state.withLockedValue { state in
            defer { state.stopped = true }
            return state.stopped
        }
        lifecycle.withLockedValue { follower in
            follower?.cancel()
            follower = nil
        }
        await suspend()
        if !already { await transport.shutdown() }
    }

    private func accept(_ channel: any Channel) -> EventLoopFuture<Void> {
        let admitted = state.withLockedValue { state -> Bool in
            guard !state.stopped, state.clients.count < configuration.maxClientConnections else { return false }
            state.clients[ObjectIdentifier(channel)] = channel
            return true
        }
        guard admitted, let pool = pools[ObjectIdentifier(channel.eventLoop)] else {
            configuration.logger.warning(
                "client connection refused: at maxClientConnections", metadata: ["limit": "\(configuration.maxClientConnections)"])
            return channel.close()
        }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLockedValue { $0.clients.removeValue(forKey: ObjectIdentifier(channel)) }
        }
        var adminToken: String?
        if let admin = configuration.emulatorAdmin {
            // Loopback is every local user's: the token goes only to the users allowed it, and a
            // connection of anyone else is refused whole rather than served without it.
            guard
                admin.allowedUsers.isEmpty
                    || LoopbackPeer.owner(local: channel.localAddress, remote: channel.remoteAddress).map(admin.allowedUsers.contains)
                        == true
            else {
                configuration.logger.warning("connection refused: not from a user --allow-uid names")
                return channel.close()
            }
            adminToken = admin.token
        }
        let port = channel.localAddress?.port ?? self.port
        let rules = ForwardingRules(
            upstream: configuration.upstream, listenHost: configuration.listenHost, listenPort: port, adminToken: adminToken)
        let idleTimeout = configuration.clientIdleTimeout
        return channel.eventLoop.makeCompletedFuture {
            let operations = channel.pipeline.syncOperations
            try operations.configureHTTPServerPipeline(withErrorHandling: true)
            try operations.addHandler(IdleStateHandler(allTimeout: idleTimeout))
            try operations.addHandler(ClientHandler(rules: rules, pool: pool.value))
        }
    }
}
