#if !canImport(Network)
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Linux: POSIX sockets, and TLS through NIOSSL (BoringSSL) verifying the upstream against the
/// system's CA bundle or the configured PEM, its name included, TLS 1.2 or later.
struct PosixTransport: BridgeTransport {
    let group: any EventLoopGroup
    let upstream: Upstream
    let pins: [SPKIPin]
    let connectTimeout: TimeAmount
    private let context: NIOSSLContext

    init(configuration: BridgeConfiguration) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .fullVerification
        tls.applicationProtocols = ["http/1.1"]
        if case .certificates(let file) = configuration.trust {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        context = try NIOSSLContext(configuration: tls)
        upstream = configuration.upstream
        pins = configuration.pins
        connectTimeout = configuration.connectTimeout
        group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
    }

    func listen(
        host: String, port: Int, backlog: Int, childInitializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: Int32(backlog))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer(childInitializer)
            .bind(host: host, port: port)
    }

    func connect(
        on eventLoop: any EventLoop, initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        let verified = eventLoop.makePromise(of: Void.self)
        let context = context
        let (upstream, pins) = (upstream, pins)
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: upstream.hostIsAddress ? nil : upstream.host))
                    try operations.addHandler(HandshakeVerdict(upstream: upstream, pins: pins, verdict: verified))
                }.flatMap { initializer(channel) }
            }
            .connect(host: upstream.host, port: upstream.port)
        connected.whenFailure { verified.fail($0) }
        let timeout = connectTimeout
        connected.whenSuccess { channel in
            // connectTimeout covers the TCP connect only: a peer that never finishes TLS must
            // not hold a pool slot (and the request waiting on it) for ever.
            let deadline = channel.eventLoop.scheduleTask(in: timeout) {
                verified.fail(UpstreamFailure.unreachable("\(upstream.authority): the TLS handshake timed out"))
                channel.close(promise: nil)
            }
            verified.futureResult.whenComplete { _ in deadline.cancel() }
        }
        return connected.flatMap { channel in
            verified.futureResult.map { channel }.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }.flatMapErrorThrowing { throw Self.failure($0, upstream: upstream) }
    }

    /// A connect error as an app's log should read it: `auth.example.com: Connection refused`.
    static func failure(_ error: any Error, upstream: Upstream) -> UpstreamFailure {
        if let failure = error as? UpstreamFailure { return failure }
        if case .connectTimeout? = error as? ChannelError { return .unreachable("\(upstream.authority): connection timed out") }
        if let error = error as? NIOConnectionError {
            if let io = error.connectionErrors.first?.error as? IOError {
                return .unreachable("\(upstream.authority): \(String(cString: strerror(io.errnoCode)))")
            }
            if error.connectionErrors.isEmpty { return .unreachable("\(upstream.host): the name does not resolve") }
        }
        return .unreachable("\(upstream.authority): \(error)")
    }

    func shutdown() async {
        try? await group.shutdownGracefully()
    }
}

/// Completes `verdict` when the handshake is done and the upstream's certificate carries a
/// pinned key (or there are no pins); fails it with the reason otherwise. Nothing is written
/// to the connection before: the pool hands it out only after.
final class HandshakeVerdict: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let upstream: Upstream
    private let pins: [SPKIPin]
    private let verdict: EventLoopPromise<Void>

    init(upstream: Upstream, pins: [SPKIPin], verdict: EventLoopPromise<Void>) {
        self.upstream = upstream
        self.pins = pins
        self.verdict = verdict
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).peerCertificate
            if let der = try? certificate?.toDERBytes(), pins.admit(certificateDER: der) {
                verdict.succeed()
                context.pipeline.syncOperations.removeHandler(self, promise: nil)
            } else {
                verdict.fail(UpstreamFailure.pinMismatch)
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOSSLError {
            verdict.fail(UpstreamFailure.untrusted(Self.describe(error)))
        } else if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            verdict.fail(UpstreamFailure.untrusted("the certificate is not for \(upstream.host)"))
        } else if error is NIOSSLExtraError {
            verdict.fail(UpstreamFailure.untrusted(String(describing: error)))
        } else {
            verdict.fail(UpstreamFailure.unreachable(String(describing: error)))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        verdict.fail(UpstreamFailure.unreachable("the connection closed during the TLS handshake"))
        context.fireChannelInactive()
    }

    /// BoringSSL's reason without its error-queue noise: `CERTIFICATE_VERIFY_FAILED`.
    static func describe(_ error: NIOSSLError) -> String {
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "certificate verify failed: not from a trusted CA, expired, or for another name"
        }
        return text
    }
}
#endif
