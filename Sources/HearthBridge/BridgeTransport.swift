import NIOCore

/// What differs between platforms: the loopback listener, and opening a connection to the
/// upstream that is ready for HTTP only once TLS verified its certificate (and the pins).
protocol BridgeTransport: Sendable {
    var group: any EventLoopGroup { get }

    func listen(
        host: String, port: Int, backlog: Int, childInitializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel>

    /// A verified connection on `eventLoop` (the client's own, so a request and its upstream
    /// never cross threads), with `initializer`'s handlers after TLS. Fails with an
    /// `UpstreamFailure`.
    func connect(
        on eventLoop: any EventLoop, initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel>

    func shutdown() async
}

extension UpstreamFailure {
    /// A connect error as the client should read it.
    static func describing(_ error: any Error) -> UpstreamFailure {
        if let failure = error as? UpstreamFailure { return failure }
        if case .connectTimeout? = error as? ChannelError { return .unreachable("connection timed out") }
        return .unreachable(String(describing: error))
    }
}
