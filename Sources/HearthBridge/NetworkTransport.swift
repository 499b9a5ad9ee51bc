#if canImport(Network)
import Foundation
import Network
import NIOCore
import NIOTransportServices
import Security

/// Apple's platforms: Network.framework through NIOTransportServices, so connections use the
/// system's trust store, VPN-on-demand and the cellular radio as URLSession's do. The
/// certificate is evaluated by the Security framework for the upstream's name (with the
/// configured anchors instead of the system's, if any), then the pins are checked, inside
/// TLS's verify block: a connection that fails either never becomes ready.
struct NetworkTransport: BridgeTransport {
    let group: any EventLoopGroup
    let upstream: Upstream
    let pins: [SPKIPin]
    let connectTimeout: TimeAmount
    /// DER: `SecCertificate` is not Sendable; the certificates are made where they are used.
    private let anchors: [[UInt8]]?
    private let verifyQueue = DispatchQueue(label: "hearth.bridge.verify")

    init(configuration: BridgeConfiguration) throws {
        if case .certificates(let file) = configuration.trust {
            anchors = try PEM.certificates(in: try PEM.read(file))
        } else {
            anchors = nil
        }
        upstream = configuration.upstream
        pins = configuration.pins
        connectTimeout = configuration.connectTimeout
        group = NIOTSEventLoopGroup(loopCount: 1)
    }

    func listen(
        host: String, port: Int, backlog: Int, childInitializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        NIOTSListenerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer(childInitializer)
            .bind(host: host, port: port)
    }

    func connect(
        on eventLoop: any EventLoop, initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        let verdict = VerdictBox()
        let options = NWProtocolTLS.Options()
        let security = options.securityProtocolOptions
        sec_protocol_options_set_min_tls_protocol_version(security, .TLSv12)
        sec_protocol_options_add_tls_application_protocol(security, "http/1.1")
        if !upstream.hostIsAddress { sec_protocol_options_set_tls_server_name(security, upstream.host) }
        let (host, pins, anchors) = (upstream.host, pins, anchors)
        sec_protocol_options_set_verify_block(
            security,
            { _, trust, complete in
                let outcome = Self.evaluate(sec_trust_copy_ref(trust).takeRetainedValue(), host: host, anchors: anchors, pins: pins)
                verdict.set(outcome)
                complete(outcome == nil)
            }, verifyQueue)
        return NIOTSConnectionBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            // Fail at once when the upstream is unreachable, rather than wait for the network.
            .channelOption(NIOTSChannelOptions.waitForActivity, value: false)
            .tlsOptions(options)
            .channelInitializer(initializer)
            .connect(host: upstream.host, port: upstream.port)
            .flatMapErrorThrowing { error in throw verdict.get() ?? UpstreamFailure.describing(error) }
    }

    /// nil when the certificate is trusted for `host` and carries a pinned key.
    static func evaluate(_ trust: SecTrust, host: String, anchors: [[UInt8]]?, pins: [SPKIPin]) -> UpstreamFailure? {
        SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
        if let anchors {
            let certificates = anchors.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
            SecTrustSetAnchorCertificates(trust, certificates as CFArray)
            SecTrustSetAnchorCertificatesOnly(trust, true)
        }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error) else {
            return .untrusted(error.map { CFErrorCopyDescription($0) as String } ?? "not trusted")
        }
        guard !pins.isEmpty else { return nil }
        guard let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate], let leaf = chain.first else {
            return .pinMismatch
        }
        return pins.admit(certificateDER: [UInt8](SecCertificateCopyData(leaf) as Data)) ? nil : .pinMismatch
    }

    func shutdown() async {
        try? await group.shutdownGracefully()
    }
}

/// The verify block's finding, read when the connection fails (Network.framework reports a
/// bare TLS error then).
private final class VerdictBox: @unchecked Sendable {
    private let lock = NSLock()
    private var failure: UpstreamFailure?
    func set(_ value: UpstreamFailure?) { lock.withLock { failure = value } }
    func get() -> UpstreamFailure? { lock.withLock { failure } }
}
#endif
