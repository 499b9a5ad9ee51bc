import NIOCore
import NIOHTTP1

/// One connection from the app (or an Admin SDK): each request is checked, then streamed to an
/// upstream connection leased for it, and the response streamed back, each side read only as
/// fast as the other side takes the bytes. Everything runs on the connection's event loop,
/// which is also its upstream connection's.
final class ClientHandler: ChannelDuplexHandler, UpstreamExchange {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case idle
        /// Waiting for a connection; the request's parts so far are kept (one read's worth:
        /// the client is not read meanwhile).
        case leasing([HTTPClientRequestPart])
        case forwarding(UpstreamConnection)
        /// Answered by the bridge itself; the rest of the request is dropped and the connection closes.
        case refusing
        case closed
    }

    private let rules: ForwardingRules
    private let pool: UpstreamPool
    private var state = State.idle
    private var context: ChannelHandlerContext?
    private var keepAlive = true
    /// The client waits for `100 Continue` before its body (the bridge answers it itself:
    /// `Expect` is not forwarded).
    private var expectsContinue = false
    private var requestEnded = false
    private var responseStarted = false
    private var upstreamReusable = false
    private var readPending = false

    init(rules: ForwardingRules, pool: UpstreamPool) {
        self.rules = rules
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: The client's request

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            guard case .idle = state else { return context.close(promise: nil) }
            keepAlive = head.isKeepAlive
            expectsContinue = head.version == .http1_1 && head.headers["expect"].contains { $0.lowercased() == "100-continue" }
            requestEnded = false
            responseStarted = false
            upstreamReusable = false
            switch rules.upstreamHead(for: head) {
            case .failure(let refusal):
                state = .refusing
                answer(.refused(refusal, listenAuthority: rules.listenAuthority), context: context)
            case .success(let forwarded):
                state = .leasing([.head(forwarded)])
                pool.lease { [self] result in leased(result) }
            }
        case .body(let buffer):
            forward(.body(.byteBuffer(buffer)))
        case .end(let trailers):
            requestEnded = true
            forward(.end(trailers))
            if case .forwarding(let connection) = state { connection.channel.flush() }
        }
    }

    private func forward(_ part: HTTPClientRequestPart) {
        switch state {
        case .leasing(var parts):
            parts.append(part)
            state = .leasing(parts)
        case .forwarding(let connection):
            connection.channel.write(part, promise: nil)
        case .idle, .refusing, .closed:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .forwarding(let connection) = state { connection.channel.flush() }
        context.fireChannelReadComplete()
    }

    private func leased(_ result: Result<UpstreamConnection, UpstreamFailure>) {
        guard case .leasing(let parts) = state, let context else {
            // The client left while it waited: the connection goes back unused.
            if case .success(let connection) = result { pool.release(connection, reusable: true) }
            return
        }
        switch result {
        case .failure(let failure):
            state = .refusing
            answer(.unavailable(failure), context: context)
        case .success(let connection):
            state = .forwarding(connection)
            connection.handler.begin(self)
            for part in parts { connection.channel.write(part, promise: nil) }
            connection.channel.flush()
            if expectsContinue && !requestEnded {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
            resumeReading()
        }
    }

    // MARK: The upstream's response

    func upstreamRead(_ part: HTTPClientResponsePart) {
        guard let context else { return }
        switch part {
        case .head(let head):
            // 1xx: the bridge never forwards `Expect` or `Upgrade`, so none is owed to the client.
            guard head.status.code >= 200 else { return }
            responseStarted = true
            upstreamReusable = head.isKeepAlive
            context.write(wrapOutboundOut(.head(rules.clientHead(for: head, closing: !keepAlive))), promise: nil)
        case .body(let buffer):
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        case .end(let trailers):
            guard case .forwarding(let connection) = state else { return }
            guard responseStarted else {
                // An end without a response (after a 101, say): nothing sane to pass on.
                connection.channel.close(promise: nil)
                return upstreamFailed(.closed)
            }
            connection.handler.end()
            // A response that ended before its request did (an early 413, say): the rest of
            // the request has nowhere to go, so neither connection carries another.
            let complete = requestEnded
            pool.release(connection, reusable: upstreamReusable && complete)
            // The state is settled before the end is written: writing it hands the client's
            // next pipelined request (HTTPServerPipelineHandler held it) to channelRead at once.
            if keepAlive && complete {
                state = .idle
                context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
                if case .idle = state { resumeReading() }
            } else {
                state = .closed
                let written = context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: written)
                written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }
    }

    func upstreamReadComplete() { context?.flush() }

    func upstreamBecameWritable() { resumeReading() }

    func upstreamFailed(_ failure: UpstreamFailure) {
        guard case .forwarding(let connection) = state, let context else { return }
        connection.handler.end()
        state = .refusing
        if responseStarted {
            // Half a response can not be taken back: the client sees the connection end.
            context.close(promise: nil)
        } else {
            answer(.unavailable(failure), context: context)
        }
    }

    var clientWritable: Bool { context?.channel.isWritable ?? false }

    // MARK: Flow control and the connection's end

    func read(context: ChannelHandlerContext) {
        switch state {
        case .leasing:
            readPending = true
        case .forwarding(let connection) where !connection.channel.isWritable:
            readPending = true
        default:
            context.read()
        }
    }

    private func resumeReading() {
        guard readPending, let context else { return }
        readPending = false
        read(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, case .forwarding(let connection) = state { connection.handler.resumeReading() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .forwarding(let connection) = state {
            // Mid-exchange: the upstream connection is in an unknown state, so it goes.
            connection.handler.end()
            connection.channel.close(promise: nil)
        }
        state = .closed
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent, case .idle = state { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The bridge's own answer in the Firebase envelope; the connection closes after it (the
    /// request's body may be unread).
    private func answer(_ reply: BridgeReply, context: ChannelHandlerContext) {
        var body = context.channel.allocator.buffer(capacity: 256)
        body.writeBytes(reply.body)
        let headers = HTTPHeaders([
            ("content-type", "application/json; charset=UTF-8"), ("content-length", "\(body.readableBytes)"),
            ("connection", "close"), ("cache-control", "no-store"),
        ])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: reply.status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
