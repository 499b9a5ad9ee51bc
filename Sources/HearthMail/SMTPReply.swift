import NIOCore

/// A server reply: its three-digit code and the text of each line.
struct SMTPReply: Sendable {
    var code: Int
    var lines: [String]
}

/// Frames the byte stream into replies; multi-line replies (`250-...` then `250 ...`) become one.
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    /// RFC 5321 allows 512 bytes per reply line; anything far longer is not an SMTP server,
    /// and neither is a reply that never ends.
    static let maximumLine = 4096
    static let maximumLines = 256

    private var pending: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLine { throw SMTPError.protocolViolation("reply line too long") }
            return .needMoreData
        }
        let bytes = buffer.readBytes(length: newline - buffer.readerIndex + 1)!
        let line = String(decoding: bytes.dropLast(bytes.dropLast().last == UInt8(ascii: "\r") ? 2 : 1), as: UTF8.self)
        let digits = line.utf8.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ (48...57).contains($0) }), let code = Int(String(line.prefix(3))) else {
            throw SMTPError.protocolViolation("not a reply: \(line.prefix(80))")
        }
        let separator = line.utf8.dropFirst(3).first
        pending.append(String(line.dropFirst(4)))
        if separator == UInt8(ascii: "-") {
            guard pending.count < Self.maximumLines else { throw SMTPError.protocolViolation("reply too long") }
            return .continue
        }
        context.fireChannelRead(wrapInboundOut(SMTPReply(code: code, lines: pending)))
        pending = []
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

public enum SMTPError: Error, Equatable, CustomStringConvertible {
    /// The server refused a step; 4yz replies are worth retrying, 5yz are not.
    case refused(step: String, code: Int, text: String)
    case protocolViolation(String)
    case connectionClosed
    case timedOut
    case extensionMissing(String)

    public var isTransient: Bool {
        switch self {
        case .refused(_, let code, _): (400..<500).contains(code)
        case .protocolViolation, .connectionClosed, .timedOut: true
        case .extensionMissing: false
        }
    }

    public var description: String {
        switch self {
        case .refused(let step, let code, let text): "\(step) refused: \(code) \(text)"
        case .protocolViolation(let detail): "SMTP protocol violation: \(detail)"
        case .connectionClosed: "the SMTP server closed the connection"
        case .timedOut: "the SMTP session timed out"
        case .extensionMissing(let name): "the SMTP server does not offer \(name)"
        }
    }
}
