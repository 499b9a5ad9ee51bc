import HearthWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain HTTP/1.1 to the daemon beside the tool (`hearth project set`): changes go through the
/// daemon's API and so through its writer, never through a second one. One request per
/// connection; no TLS (the daemon's own address, usually loopback).
public struct DaemonClient: Sendable {
    public let host: String
    public let port: Int
    public let bearer: String?

    public init(host: String, port: Int, bearer: String?) {
        self.host = host
        self.port = port
        self.bearer = bearer
    }

    public struct Reply: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    public enum Failure: Error, CustomStringConvertible {
        case unreachable(String)
        case malformedReply

        public var description: String {
            switch self {
            case .unreachable(let address): "no Hearth daemon answers at \(address) (start it with hearth serve)"
            case .malformedReply: "the daemon's reply is not HTTP"
            }
        }
    }

    /// The daemon's refusal, in Firebase's envelope.
    public struct Refusal: Error, CustomStringConvertible {
        public var status: Int
        public var message: String
        /// The error code, without the detail after " : ".
        public var code: String { String(message.split(separator: " : ", maxSplits: 1).first ?? "") }
        public var description: String { "the daemon refused (\(status)): \(message)" }
    }

    /// One admin call with a JSON body: the JSON answer, or the refusal.
    public func call(_ method: String, _ path: String, _ body: JSONValue?) throws -> JSONValue {
        let reply = try send(method, path, json: body?.encoded())
        let answer = JSONValue.parse(reply.body) ?? .null
        guard reply.status == 200 else {
            throw Refusal(status: reply.status, message: answer["error"]?["message"]?.stringValue ?? answer.text)
        }
        return answer
    }

    public func send(_ method: String, _ path: String, json body: [UInt8]? = nil) throws -> Reply {
        let socket = try connect()
        defer { close(socket) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nAccept: application/json\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw Failure.unreachable(address) }
            sent += written
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[..<count]
            guard response.count < 8 << 20 else { throw Failure.malformedReply }
        }
        return try Self.parse(response)
    }

    var address: String { "http://\(host):\(port)" }

    private func connect() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let first = results else {
            throw Failure.unreachable(address)
        }
        defer { freeaddrinfo(results) }
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            let socket = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if socket >= 0 {
                var timeout = timeval(tv_sec: 30, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(socket, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return socket }
                close(socket)
            }
            candidate = info.pointee.ai_next
        }
        throw Failure.unreachable(address)
    }

    /// Status line, headers, then the body: as long as Content-Length says, chunked, or to the end.
    static func parse(_ response: [UInt8]) throws -> Reply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = response.indices.first(where: { response[$0...].starts(with: separator) }) else {
            throw Failure.malformedReply
        }
        let head = String(decoding: response[..<end], as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = head.first, statusLine.hasPrefix("HTTP/1."),
            let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { throw Failure.malformedReply }
        var body = Array(response[(end + 4)...])
        let headers = head.dropFirst().map { $0.lowercased() }
        if headers.contains(where: { $0.hasPrefix("transfer-encoding:") && $0.contains("chunked") }) {
            body = try dechunked(body)
        } else if let length = headers.first(where: { $0.hasPrefix("content-length:") })
            .flatMap({ Int($0.dropFirst("content-length:".count).trimmingSpaces) }), length <= body.count
        {
            body = Array(body[..<length])
        }
        return Reply(status: status, body: body)
    }

    private static func dechunked(_ bytes: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        var rest = bytes[...]
        while let lineEnd = rest.indices.first(where: { rest[$0...].starts(with: [13, 10]) }) {
            let sizeText = String(decoding: rest[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16) else { throw Failure.malformedReply }
            if size == 0 { break }
            let start = lineEnd + 2
            guard start + size <= rest.endIndex else { throw Failure.malformedReply }
            body += rest[start..<start + size]
            rest = rest[min(start + size + 2, rest.endIndex)...]
        }
        return body
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
