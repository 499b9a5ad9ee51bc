import HTTPTypes
import HearthAuth
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// How long a client may take to send one request (headers and body), from its first byte:
/// `base`, plus a second for every `minBytesPerSecond` received, never more than `maximum`
/// (Apache's mod_reqtimeout rule). A body trickled a byte at a time runs out after about
/// `base`; a large body sent at a fair rate gets the time it needs.
public struct RequestTimeLimit: Sendable, Equatable {
    public var base: Duration
    public var minBytesPerSecond: Int
    public var maximum: Duration

    public init(base: Duration = .seconds(10), minBytesPerSecond: Int = 1024, maximum: Duration = .seconds(60)) {
        self.base = base
        self.minBytesPerSecond = minBytesPerSecond
        self.maximum = maximum
    }

    /// The time allowed once `bytes` of the request have arrived.
    func allowance(afterReceiving bytes: Int) -> TimeAmount {
        let earned = TimeAmount(base) + .nanoseconds(Int64(bytes) * 1_000_000_000 / Int64(minBytesPerSecond))
        return min(earned, TimeAmount(maximum))
    }
}

/// Every connection's guard, between the HTTP codec and Hummingbird. It ends a connection with
/// an answer in the Firebase envelope, instead of Hummingbird's bodiless 400 or a silent close,
/// when a request can not be read: the parser rejected it (400, or 431 for a URL or headers over
/// NIO's limits) or it did not arrive in time (408, `RequestTimeLimit`). Requests read whole
/// before that are answered first, in order (HTTP/1.1 pipelining): whatever was run gets its
/// response, nothing after the failure runs, then the error and the close.
final class RequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: RequestTimeLimit
    /// When the request being received started, and its bytes so far; `nil` between requests.
    private var receiving: (startedAt: NIODeadline, bytes: Int)?
    private var timer: Scheduled<Void>?
    /// Requests read whole (and passed on) and responses written whole.
    private var requestsRead = 0
    private var responsesWritten = 0
    private var responseInProgress = false
    /// The failure that ends the connection: its answer waits for the requests before it.
    private enum Ending {
        case none
        case pending(FirebaseError)
        case answered
    }
    private var ending = Ending.none

    init(limit: RequestTimeLimit) {
        self.limit = limit
    }

    /// Puts the byte counter ahead of the HTTP decoder: only there are the bytes of a request
    /// that is not yet a request (a header trickled in) seen.
    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(ByteCounter(guard: self, context: context), position: .first)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// Raw bytes arrived (from `ByteCounter`): the first ones after a complete request start the
    /// next request's clock; every byte earns it time.
    fileprivate func received(_ count: Int, context: ChannelHandlerContext) {
        guard case .none = ending else { return }
        if var current = receiving {
            current.bytes += count
            receiving = current
        } else {
            receiving = (.now(), count)
            if timer == nil { schedule(context) }
        }
    }

    /// One timer per connection at most, not one per request: a request that ends leaves it
    /// running, and when it fires it looks at whatever request is being received then.
    private func schedule(_ context: ChannelHandlerContext) {
        guard let receiving else { return }
        let deadline = receiving.startedAt + limit.allowance(afterReceiving: receiving.bytes)
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard let current = self.receiving else { return }
            // Bytes that arrived meanwhile may have earned more time, or this is a later request.
            if current.startedAt + limit.allowance(afterReceiving: current.bytes) > .now() {
                schedule(loopContext.value)
            } else {
                fail(Self.timedOut, loopContext.value)
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .none = ending else { return }  // nothing runs after the failure
        if case .end = unwrapInboundIn(data) {
            requestsRead += 1
            receiving = nil
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        fail(Self.firebaseError(parserError), context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: responseInProgress = true
        case .body: break
        case .end:
            responseInProgress = false
            responsesWritten += 1
        }
        context.write(data, promise: promise)
        if case .pending = ending { answerIfDue(context) }
    }

    private func fail(_ error: FirebaseError, _ context: ChannelHandlerContext) {
        guard case .none = ending else { return }
        ending = .pending(error)
        receiving = nil
        timer?.cancel()
        timer = nil
        answerIfDue(context)
    }

    /// Writes the failure and closes, once every request read whole before it has its answer.
    private func answerIfDue(_ context: ChannelHandlerContext) {
        guard case .pending(let failure) = ending, !responseInProgress, responsesWritten >= requestsRead else { return }
        ending = .answered
        let body = ByteBuffer(bytes: JSONResponse.envelope(failure).encoded())
        let head = HTTPResponse(
            status: HTTPResponse.Status(code: failure.httpStatus),
            headerFields: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes),
                .connection: "close",
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopContext.value.close(promise: nil) }
    }

    static let timedOut = FirebaseError(
        httpStatus: 408, message: "Request not received in time", status: "DEADLINE_EXCEEDED", reason: "timeout")

    static func firebaseError(_ error: HTTPParserError) -> FirebaseError {
        switch error {
        case .headerOverflow:
            FirebaseError(
                httpStatus: 431, message: "Request header fields too large", status: "INVALID_ARGUMENT", reason: "badRequest")
        default:
            FirebaseError(httpStatus: 400, message: "Malformed HTTP request", status: "INVALID_ARGUMENT", reason: "badRequest")
        }
    }
}

/// First in the pipeline: tells the connection's `RequestGuard` how many bytes arrived.
private final class ByteCounter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let requestGuard: RequestGuard
    private let guardContext: ChannelHandlerContext

    init(guard requestGuard: RequestGuard, context: ChannelHandlerContext) {
        self.requestGuard = requestGuard
        self.guardContext = context
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        requestGuard.received(unwrapInboundIn(data).readableBytes, context: guardContext)
        context.fireChannelRead(data)
    }
}
