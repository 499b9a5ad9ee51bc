import HTTPTypes
import HearthAuth
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request the HTTP parser rejects (a URL or headers over the limits, broken framing)
/// with the Firebase envelope, then closes the connection: the same 4xx the API gives bad
/// input, instead of Hummingbird's bodiless 400. Sits between the HTTP codec and the server.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let firebaseError = Self.firebaseError(parserError)
        let body = ByteBuffer(bytes: JSONResponse.envelope(firebaseError).encoded())
        let head = HTTPResponse(
            status: HTTPResponse.Status(code: firebaseError.httpStatus),
            headerFields: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes),
                .connection: "close",
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let loopContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopContext.value.close(promise: nil) }
    }

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
