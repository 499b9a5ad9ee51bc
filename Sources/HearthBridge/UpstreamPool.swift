import NIOCore
import NIOHTTP1

/// One event loop's connections to the upstream. A request leases one (an idle one first,
/// else a new one while the loop is under its share of the limit, else it waits its turn up to
/// `queueTimeout`) and gives it back when its response ended; idle ones are closed after
/// `idleTimeout`. Every method runs on `eventLoop`: clients of this loop only, no locks.
final class UpstreamPool {
    struct Settings {
        var limit: Int
        var idleTimeout: TimeAmount
        var queueTimeout: TimeAmount
        var responseTimeout: TimeAmount
    }

    typealias Completion = (Result<UpstreamConnection, UpstreamFailure>) -> Void

    private let eventLoop: any EventLoop
    private let transport: any BridgeTransport
    private let settings: Settings
    private var idle: [UpstreamConnection] = []
    /// Connections open or opening, leased and idle.
    private var open = 0
    private var waiters = CircularBuffer<(id: Int, completion: Completion, timeout: Scheduled<Void>)>()
    private var nextWaiter = 0

    init(eventLoop: any EventLoop, transport: any BridgeTransport, settings: Settings) {
        self.eventLoop = eventLoop
        self.transport = transport
        self.settings = settings
    }

    var openConnections: Int { open }

    func lease(_ completion: @escaping Completion) {
        eventLoop.assertInEventLoop()
        while let connection = idle.popLast() {
            connection.idleTimer?.cancel()
            connection.idleTimer = nil
            if connection.channel.isActive { return completion(.success(connection)) }
        }
        if open < settings.limit { return connect(completion) }
        let id = nextWaiter
        nextWaiter += 1
        let timeout = eventLoop.assumeIsolated().scheduleTask(in: settings.queueTimeout) { [self] in
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
            waiters.remove(at: index).completion(.failure(.busy))
        }
        waiters.append((id, completion, timeout))
    }

    /// Back from a request: to the next waiter, or idle, or closed when it can not carry another.
    func release(_ connection: UpstreamConnection, reusable: Bool) {
        eventLoop.assertInEventLoop()
        guard reusable, connection.channel.isActive else {
            connection.channel.close(promise: nil)
            return
        }
        if let waiter = waiters.popFirst() {
            waiter.timeout.cancel()
            return waiter.completion(.success(connection))
        }
        connection.idleTimer = eventLoop.assumeIsolated().scheduleTask(in: settings.idleTimeout) {
            connection.channel.close(promise: nil)
        }
        idle.append(connection)
    }

    /// Closes the idle connections (the app went to the background); leased ones finish first.
    func closeIdle() {
        for connection in idle { connection.channel.close(promise: nil) }
    }

    private func connect(_ completion: @escaping Completion) {
        open += 1
        let timeout = settings.responseTimeout
        transport.connect(on: eventLoop) { channel in
            channel.eventLoop.makeCompletedFuture {
                let operations = channel.pipeline.syncOperations
                try operations.addHTTPClientHandlers()
                try operations.addHandler(UpstreamHandler(responseTimeout: timeout))
            }
        }.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let channel):
                guard let handler = try? channel.pipeline.syncOperations.handler(type: UpstreamHandler.self) else {
                    open -= 1
                    channel.close(promise: nil)
                    return completion(.failure(.closed))
                }
                let connection = UpstreamConnection(channel: channel, handler: handler)
                channel.closeFuture.assumeIsolated().whenComplete { [self] _ in closed(connection) }
                completion(.success(connection))
            case .failure(let error):
                open -= 1
                completion(.failure(.describing(error)))
                // Room was made: a waiter may try for itself (and fail fast too if the upstream is down).
                admitWaiter()
            }
        }
    }

    private func closed(_ connection: UpstreamConnection) {
        open -= 1
        connection.idleTimer?.cancel()
        idle.removeAll { $0 === connection }
        admitWaiter()
    }

    private func admitWaiter() {
        guard open < settings.limit, let waiter = waiters.popFirst() else { return }
        waiter.timeout.cancel()
        connect(waiter.completion)
    }
}

/// A verified connection to the upstream and the handler that routes its responses.
final class UpstreamConnection {
    let channel: any Channel
    let handler: UpstreamHandler
    var idleTimer: Scheduled<Void>?

    init(channel: any Channel, handler: UpstreamHandler) {
        self.channel = channel
        self.handler = handler
    }
}

/// What the upstream's side tells the client exchange it serves.
protocol UpstreamExchange: AnyObject {
    func upstreamRead(_ part: HTTPClientResponsePart)
    func upstreamReadComplete()
    func upstreamBecameWritable()
    func upstreamFailed(_ failure: UpstreamFailure)
    /// Whether the client takes more response bytes now (else the upstream is not read).
    var clientWritable: Bool { get }
}

/// The end of the upstream connection's pipeline: hands responses to the exchange using the
/// connection, reads only as fast as the client takes the bytes, and reports an upstream silent
/// for `responseTimeout` while it is being read (not while the client holds it back) or a
/// closed connection.
final class UpstreamHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private(set) weak var exchange: (any UpstreamExchange)?
    private let responseTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var readPending = false
    private var lastHeard = NIODeadline.now()
    private var silence: Scheduled<Void>?

    init(responseTimeout: TimeAmount) {
        self.responseTimeout = responseTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        silence?.cancel()
        self.context = nil
    }

    /// An exchange starts using the connection: its response is due within `responseTimeout`.
    func begin(_ exchange: any UpstreamExchange) {
        self.exchange = exchange
        lastHeard = .now()
        watchForSilence()
    }

    /// The exchange is done with the connection (its response ended, or it gave up).
    func end() {
        exchange = nil
        silence?.cancel()
        silence = nil
    }

    private func watchForSilence() {
        guard let context else { return }
        silence = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastHeard + responseTimeout) { [self] in
            guard exchange != nil else { return }
            // Held back by a slow client: that is not the upstream's silence.
            if readPending { lastHeard = .now() }
            if NIODeadline.now() - lastHeard < responseTimeout { return watchForSilence() }
            take()?.upstreamFailed(.timedOut)
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange else {
            // Bytes nobody asked for: the connection can not be trusted to frame the next answer.
            context.close(promise: nil)
            return
        }
        lastHeard = .now()
        exchange.upstreamRead(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        exchange?.upstreamReadComplete()
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { exchange?.upstreamBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        take()?.upstreamFailed(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if let exchange, !exchange.clientWritable {
            readPending = true
        } else {
            context.read()
        }
    }

    /// The client drained what it was sent: read the upstream again.
    func resumeReading() {
        guard readPending, let context else { return }
        readPending = false
        context.read()
    }

    private func take() -> (any UpstreamExchange)? {
        defer { end() }
        return exchange
    }
}
