import HTTPTypes
import HearthAuth
import HearthWire
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
        precondition(minBytesPerSecond > 0 && base > .zero && maximum >= base, "an impossible request time limit")
        self.base = base
        self.minBytesPerSecond = minBytesPerSecond
        self.maximum = min(maximum, .seconds(86_400))
    }

    /// The time allowed once `bytes` of the request have arrived; whole seconds earned, so no
    /// byte count can overflow it.
    func allowance(afterReceiving bytes: Int) -> TimeAmount {
        let maximum = TimeAmount(self.maximum)
        let earned = min(Int64(bytes / minBytesPerSecond), maximum.nanoseconds / 1_000_000_000)
        return min(TimeAmount(base) + .seconds(earned), maximum)
    }
}

/// Every connection's guard, between the HTTP codec and Hummingbird. It ends a connection with
/// an answer in the Firebase envelope, instead of Hummingbird's bodiless 400 or a silent close,
/// when a request can not be read: the parser rejected it (400, or 431 for a URL or headers over
/// NIO's limits), it did not arrive in time (408, `RequestTimeLimit`; a new connection's first
/// request head within the governor's `headTimeout`), or its bytes would take the server past
/// its budget of buffered request bytes (503 with `Retry-After`). Requests read whole
/// before that are answered first, in order (HTTP/1.1 pipelining); the request cut short never
/// runs (its body read fails instead of ending early), nor does anything after it; then the
/// error, and the close. A connection its address may not hold (`ConnectionGovernor`) is closed
/// as soon as it opens.
final class RequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: RequestTimeLimit
    private let governor: ConnectionGovernor
    /// The peer, once the connection counts against its address's share.
    private var admission: Admission = .pending
    private enum Admission {
        case pending
        case admitted(ConnectionGovernor.Client)
        case refused
    }
    /// Bytes of this connection's unanswered requests charged to the governor's budget.
    private var charged = 0
    /// Closes a connection whose first request head has not arrived in time.
    private var headTimer: Scheduled<Void>?
    /// When the request being received started, and its bytes so far; `nil` between requests.
    private var receiving: (startedAt: NIODeadline, bytes: Int)?
    /// One timer per connection at most, not one per request: a request that ends leaves it
    /// running, and when it fires it looks at whatever request is being received then.
    private var timer: (task: Scheduled<Void>, deadline: NIODeadline)?
    /// Requests passed on whole, a head passed on without its end yet, responses written whole.
    private var requestsRead = 0
    private var requestUnfinished = false
    private var responsesWritten = 0
    private var response = ResponseState.none

    private enum ResponseState {
        case none, passing, dropping
    }

    /// The failure that ends the connection: its answer waits for the requests before it.
    private enum Ending {
        case serving
        case pending(FirebaseError)
        case answered
    }
    private var ending = Ending.serving

    /// How long a connection whose output Hummingbird closed (after `Connection: close`) may
    /// stay half open: a client that pipelined more and never closes does not hold it for ever.
    static let lingerTime = TimeAmount.seconds(2)

    init(limit: RequestTimeLimit, governor: ConnectionGovernor) {
        self.limit = limit
        self.governor = governor
    }

    /// Puts the byte counter ahead of the HTTP decoder: only there are the bytes of a request
    /// that is not yet a request (a header trickled in) seen.
    func handlerAdded(context: ChannelHandlerContext) {
        do {
            try context.pipeline.syncOperations.addHandler(ByteCounter(guard: self, context: context), position: .first)
        } catch {
            context.close(promise: nil)  // unguarded, the connection is not served
            return
        }
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        if case .admitted = admission { context.fireChannelActive() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.task.cancel()
        timer = nil
        headTimer?.cancel()
        headTimer = nil
        if case .admitted(let client) = admission {
            governor.free(charged, by: client)
            governor.release(client)
        }
        charged = 0
        admission = .refused
    }

    /// Counts the connection against its address's share, or closes it; starts the clock its
    /// first request head must beat.
    private func admit(_ context: ChannelHandlerContext) {
        guard case .pending = admission else { return }
        guard let client = governor.admit(context.channel.remoteAddress?.ipAddress) else {
            admission = .refused
            context.close(promise: nil)
            return
        }
        admission = .admitted(client)
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        headTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(governor.limits.headTimeout)) { [self] in
            headTimer = nil
            // Not a byte in all that time: closed without an answer (nobody is there to read
            // one, and a client just then sending would take it for its own).
            if receiving == nil, case .serving = ending {
                ending = .answered
                loopContext.value.close(promise: nil)
            } else {
                fail(Self.timedOut, loopContext.value)
            }
        }
    }

    // MARK: Receiving

    /// Raw bytes arrived (from `ByteCounter`): the first ones after a complete request start the
    /// next request's clock; every byte earns it time, and is charged to the server's budget of
    /// buffered bytes until its request is answered. Whether the bytes go on to the decoder:
    /// nothing does after a failure, nor before the connection is admitted.
    fileprivate func received(_ count: Int, context: ChannelHandlerContext) -> Bool {
        guard case .serving = ending, case .admitted(let client) = admission else { return false }
        if var current = receiving {
            current.bytes += count
            receiving = current
        } else {
            receiving = (context.eventLoop.now, count)
            scheduleTimer(context)
        }
        guard governor.charge(count, requestBytes: receiving?.bytes ?? count, by: client) else {
            fail(Self.overBudget, context)
            return false
        }
        charged += count
        return true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .serving = ending else { return }  // nothing runs after the failure
        switch unwrapInboundIn(data) {
        case .head:
            headTimer?.cancel()
            headTimer = nil
            requestUnfinished = true
            // Its first bytes may have come in the read that ended the request before.
            if receiving == nil {
                receiving = (context.eventLoop.now, 0)
                scheduleTimer(context)
            }
        case .body: break
        case .end:
            requestUnfinished = false
            requestsRead += 1
            receiving = nil
            // Answered before its body was all read (a 404, a refused key, a 413): Hummingbird
            // drains the rest after the answer, and those bytes leave the budget now.
            if responsesWritten >= requestsRead { freeCharged(keeping: 0) }
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

    /// A request cut off by the peer going away must fail, not run with what arrived of it.
    func channelInactive(context: ChannelHandlerContext) {
        abandonUnfinishedRequest(context)
        context.fireChannelInactive()
    }

    private func scheduleTimer(_ context: ChannelHandlerContext) {
        guard let receiving else { return }
        let deadline = receiving.startedAt + limit.allowance(afterReceiving: receiving.bytes)
        if let timer {
            guard deadline < timer.deadline else { return }
            timer.task.cancel()
        }
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            timerFired(loopContext.value)
        }
        timer = (task, deadline)
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        guard case .serving = ending, var current = receiving else { return }
        if responsesWritten < requestsRead {
            // Earlier requests are still being answered, and the server reads no further meanwhile
            // (backpressure): the clock starts again once they are.
            current.startedAt = context.eventLoop.now
            receiving = current
            scheduleTimer(context)
        } else if current.startedAt + limit.allowance(afterReceiving: current.bytes) > context.eventLoop.now {
            scheduleTimer(context)  // bytes that arrived meanwhile earned more time
        } else {
            fail(Self.timedOut, context)
        }
    }

    // MARK: Answering

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .head = part {
            // After a failure only the requests read whole before it are answered: a handler
            // still running for the request cut short writes into the void.
            let answerable: Bool
            switch ending {
            case .serving: answerable = true
            case .pending: answerable = responsesWritten < requestsRead
            case .answered: answerable = false
            }
            response = answerable ? .passing : .dropping
        }
        guard case .passing = response else {
            if case .end = part { response = .none }
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
        guard case .end = part else { return }
        response = .none
        responsesWritten += 1
        if responsesWritten >= requestsRead {
            // Every request read whole is answered: their bytes leave the budget; a request still
            // arriving (pipelined behind them, or answered early) keeps its own.
            freeCharged(keeping: receiving?.bytes ?? 0)
        }
        switch ending {
        case .serving:
            // A request pipelined behind this one waited for it: its clock starts now.
            if responsesWritten >= requestsRead, var current = receiving {
                current.startedAt = context.eventLoop.now
                receiving = current
            }
        case .pending: answerIfDue(context)
        case .answered: break
        }
    }

    /// Gives back to the budget what this connection was charged, but `kept` bytes (of the
    /// request still arriving).
    private func freeCharged(keeping kept: Int) {
        guard case .admitted(let client) = admission, charged > kept else { return }
        governor.free(charged - kept, by: client)
        charged = kept
    }

    /// After `Connection: close` Hummingbird half-closes and waits for the client to close.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        context.close(mode: mode, promise: promise)
        if mode == .output { closeSoon(context) }
    }

    private func fail(_ error: FirebaseError, _ context: ChannelHandlerContext) {
        guard case .serving = ending else { return }
        ending = .pending(error)
        receiving = nil
        timer?.task.cancel()
        timer = nil
        headTimer?.cancel()
        headTimer = nil
        abandonUnfinishedRequest(context)
        answerIfDue(context)
    }

    /// Hummingbird reads a body until its end part; an inbound error makes that read throw, so
    /// the handler never sees a body cut short as a whole one. Requests buffered before it are
    /// still delivered first.
    private func abandonUnfinishedRequest(_ context: ChannelHandlerContext) {
        guard requestUnfinished else { return }
        requestUnfinished = false
        context.fireErrorCaught(Self.cutShort)
    }

    /// Writes the failure and closes, once every request read whole before it has its answer.
    private func answerIfDue(_ context: ChannelHandlerContext) {
        guard case .pending(let failure) = ending, case .none = response, responsesWritten >= requestsRead else { return }
        ending = .answered
        let body = ByteBuffer(bytes: JSONResponse.envelope(failure).encoded())
        var head = HTTPResponse(
            status: HTTPResponse.Status(code: failure.httpStatus),
            headerFields: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes),
                .connection: "close",
            ])
        if failure == Self.overBudget { head.headerFields[.retryAfter] = Self.overBudgetRetrySeconds }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopContext.value.close(promise: nil) }
        closeSoon(context)  // a client that reads nothing does not hold the socket either
    }

    private func closeSoon(_ context: ChannelHandlerContext) {
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) { loopContext.value.close(promise: nil) }
    }

    static let timedOut = FirebaseError(
        httpStatus: 408, message: "Request not received in time", status: "DEADLINE_EXCEEDED", reason: "timeout")

    /// The server holds as many request bytes as it may: this request is not read; the client
    /// tries again in a moment.
    static let overBudget = FirebaseError(
        httpStatus: 503, message: "UNAVAILABLE : The server is busy receiving other requests; try again shortly.",
        status: "UNAVAILABLE", reason: "backendError")
    static let overBudgetRetrySeconds = "2"

    /// What the body read of a request cut short throws (its answer is never sent).
    static let cutShort = FirebaseError(
        httpStatus: 400, message: "Request incomplete", status: "INVALID_ARGUMENT", reason: "badRequest")

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
        guard requestGuard.received(unwrapInboundIn(data).readableBytes, context: guardContext) else { return }
        context.fireChannelRead(data)
    }
}
