import Foundation
import HTTPTypes
import HearthAuth
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing

@testable import HearthHTTP

/// The connection guard on an embedded channel behind NIO's real HTTP/1 codec, with the event
/// loop's clock moved by hand.
@Suite("request guard: time limits, pipelining and requests cut short")
struct RequestGuardTests {
    static let limit = RequestTimeLimit(base: .seconds(10), minBytesPerSecond: 1024, maximum: .seconds(60))

    /// A governor whose first-head timeout is out of the way of the request time limits.
    static func governor(bufferedBytes: Int = 64 << 20, headTimeout: Duration = .seconds(3600)) -> ConnectionGovernor {
        ConnectionGovernor(limits: .init(bufferedBytes: bufferedBytes, headTimeout: headTimeout))
    }

    static func connection(_ governor: ConnectionGovernor = governor(), from address: String = "127.0.0.1") throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try channel.pipeline.syncOperations.addHandler(RequestGuard(limit: limit, governor: governor))
        try channel.connect(to: SocketAddress(ipAddress: address, port: 1)).wait()
        return channel
    }

    /// What the server wrote so far, as text.
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    static func respond(_ channel: EmbeddedChannel, _ body: String) throws {
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok, headerFields: [.contentLength: "\(body.utf8.count)"])))
        try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(string: body)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
    }

    /// The parts passed on to the application.
    static func delivered(_ channel: EmbeddedChannel) throws -> [String] {
        var parts: [String] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) {
            switch part {
            case .head(let head): parts.append("head \(head.path ?? "")")
            case .body(let buffer): parts.append("body \(String(buffer: buffer))")
            case .end: parts.append("end")
            }
        }
        return parts
    }

    @Test("a body trickled past its time: 408 in the envelope, the close, and the body read fails instead of ending")
    func trickledBody() throws {
        let channel = try Self.connection()
        try channel.writeInbound(ByteBuffer(string: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{}"))
        #expect(try Self.delivered(channel) == ["head /a", "body {}"])
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try channel.writeInbound(ByteBuffer(string: " "))
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1500))
        let answer = try Self.written(channel)
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(answer.lowercased().contains("connection: close"))
        #expect(answer.contains(#""message":"Request not received in time""#))
        #expect(throws: RequestGuard.cutShort) { try channel.throwIfErrorCaught() }
        #expect(!channel.isActive)
        // A response the cut-short request's handler writes anyway goes nowhere.
        #expect(throws: (any Error).self) { try Self.respond(channel, "late") }
    }

    @Test("bytes earn time: a second per minBytesPerSecond, never past the maximum")
    func bytesEarnTime() throws {
        let channel = try Self.connection()
        try channel.writeInbound(ByteBuffer(string: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try channel.writeInbound(ByteBuffer(repeating: UInt8(ascii: " "), count: 4096))  // 4 s more
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 408"))

        #expect(Self.limit.allowance(afterReceiving: 0) == .seconds(10))
        #expect(Self.limit.allowance(afterReceiving: 10 * 1024) == .seconds(20))
        #expect(Self.limit.allowance(afterReceiving: Int.max) == .seconds(60))  // saturates, no overflow trap
    }

    @Test("a header trickled in gets the same limit as a body")
    func trickledHeader() throws {
        let channel = try Self.connection()
        try channel.writeInbound(ByteBuffer(string: "POST /a HTTP/1.1\r\nX-Slow: "))
        for _ in 0..<10 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            try channel.writeInbound(ByteBuffer(string: "a"))
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 408"))
        #expect(try Self.delivered(channel).isEmpty)
    }

    @Test("requests pipelined before garbage are each answered, in order, before the 400; none after it runs")
    func pipelinedBeforeGarbage() throws {
        let channel = try Self.connection()
        try channel.writeInbound(ByteBuffer(string: "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP\r\n\r\n"))
        #expect(try Self.delivered(channel) == ["head /1", "end", "head /2", "end"])
        #expect(try Self.written(channel).isEmpty)  // nothing before the answers it owes
        try Self.respond(channel, "one")
        #expect(try Self.written(channel).hasSuffix("one"))
        #expect(channel.isActive)
        try Self.respond(channel, "two")
        let rest = try Self.written(channel)
        let two = try #require(rest.range(of: "two"))
        #expect(rest[two.upperBound...].hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(rest.contains(#""message":"Malformed HTTP request""#))
        #expect(!channel.isActive)
        #expect(throws: Never.self) { try channel.throwIfErrorCaught() }  // no request was cut short
    }

    @Test("a request pipelined behind a slow one is timed from when the slow one is answered")
    func clockWaitsForEarlierAnswers() throws {
        let channel = try Self.connection()
        try channel.writeInbound(
            ByteBuffer(string: "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nPOST /next HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n{"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))  // /slow is still being handled
        #expect(try Self.written(channel).isEmpty)
        try Self.respond(channel, "slow")
        _ = try Self.written(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(try Self.written(channel).isEmpty)
        try channel.writeInbound(ByteBuffer(string: "}  "))
        #expect(try Self.delivered(channel).suffix(2) == ["body }  ", "end"])
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(try Self.written(channel).isEmpty)
        #expect(channel.isActive)
    }

    @Test("a client that goes away mid-body: the body read fails, the request does not run on half a body")
    func abandonedMidBody() throws {
        let channel = try Self.connection()
        try channel.writeInbound(ByteBuffer(string: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{}"))
        #expect(try Self.delivered(channel) == ["head /a", "body {}"])
        channel.pipeline.fireChannelInactive()
        #expect(throws: (any Error).self) { try channel.throwIfErrorCaught() }
        #expect(!(try Self.delivered(channel)).contains("end"))
    }

    // MARK: The governor's shares (issue 28)

    @Test("a request's bytes leave the budget once answered: in turn, answered before its body is read, pipelined")
    func budgetIsGivenBack() throws {
        let governor = Self.governor()
        let channel = try Self.connection(governor)
        try channel.writeInbound(ByteBuffer(string: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"))
        #expect(governor.bufferedRequestBytes > 0)
        _ = try Self.delivered(channel)
        try Self.respond(channel, "ok")
        #expect(governor.bufferedRequestBytes == 0)
        // Answered (a 404, a refused key) before its body arrived: the rest is drained afterwards
        // and leaves the budget as it ends.
        try channel.writeInbound(ByteBuffer(string: "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n"))
        try Self.respond(channel, "no")
        try channel.writeInbound(ByteBuffer(repeating: UInt8(ascii: " "), count: 10000))
        #expect(governor.bufferedRequestBytes == 0)
        // Pipelined: the answered request's bytes go, the one still arriving keeps its own.
        try channel.writeInbound(ByteBuffer(string: "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"))
        try channel.writeInbound(ByteBuffer(string: "POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{"))
        try Self.respond(channel, "c")
        let pending = governor.bufferedRequestBytes
        #expect(pending > 0 && pending < 60)
        try channel.writeInbound(ByteBuffer(string: "}   "))
        try Self.respond(channel, "d")
        #expect(governor.bufferedRequestBytes == 0)
        _ = try channel.finish()
        #expect(governor.openConnections == 0)
    }

    @Test("past the budget: 503 with Retry-After, the bytes not passed on; a closed connection gives back what it held")
    func overBudget() throws {
        let governor = Self.governor(bufferedBytes: 1 << 20)
        let holder = try Self.connection(governor, from: "192.0.2.1")
        try holder.writeInbound(ByteBuffer(string: "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"))
        try holder.writeInbound(ByteBuffer(repeating: 0x20, count: 100_000))
        let held = governor.bufferedRequestBytes
        let channel = try Self.connection(governor, from: "192.0.2.2")
        try channel.writeInbound(ByteBuffer(string: "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"))
        _ = try Self.delivered(channel)
        #expect(throws: RequestGuard.cutShort) { try channel.writeInbound(ByteBuffer(repeating: 0x20, count: 900_000)) }
        let answer = try Self.written(channel)
        #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(answer)")
        #expect(answer.lowercased().contains("retry-after: 2"))
        #expect(try Self.delivered(channel).isEmpty, "the refused bytes went no further")
        #expect(governor.bufferedRequestBytes >= held)
        channel.embeddedEventLoop.run()
        let afterRefusal = governor.bufferedRequestBytes
        #expect(afterRefusal == held, "the refused connection closed and gave back its bytes")
        // The holder goes away mid-body: its request fails (never runs on half a body), its bytes go.
        #expect(throws: RequestGuard.cutShort) { _ = try holder.finish() }
        #expect(
            governor.bufferedRequestBytes == 0 && governor.openConnections == 0,
            "\(governor.bufferedRequestBytes) \(governor.openConnections)")
    }

    @Test("a new connection must send a whole head in time: silent, it is closed without an answer; half a head gets 408")
    func firstHeadTimeout() throws {
        let silent = try Self.connection(Self.governor(headTimeout: .seconds(5)))
        silent.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(try Self.written(silent).isEmpty && !silent.isActive)

        let partial = try Self.connection(Self.governor(headTimeout: .seconds(5)))
        try partial.writeInbound(ByteBuffer(string: "GET /a HTTP/1.1\r\nHo"))
        partial.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(try Self.written(partial).hasPrefix("HTTP/1.1 408"))

        // Once a request came whole, the connection waits for the next as long as it is idle.
        let served = try Self.connection(Self.governor(headTimeout: .seconds(5)))
        try served.writeInbound(ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"))
        try Self.respond(served, "ok")
        _ = try Self.written(served)
        served.embeddedEventLoop.advanceTime(by: .seconds(30))
        let writtenSince = try Self.written(served)
        #expect(served.isActive && writtenSince.isEmpty)
    }

    @Test("a connection its address may not hold is closed at once and passes nothing on")
    func refusedConnection() throws {
        let governor = ConnectionGovernor(limits: .init(maxConnections: 100, perAddress: 1, headTimeout: .seconds(3600)))
        let first = try Self.connection(governor, from: "198.51.100.4")
        #expect(first.isActive)
        let second = try Self.connection(governor, from: "198.51.100.4")
        #expect(!second.isActive)
        _ = try? second.writeInbound(ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(try Self.delivered(second).isEmpty)
        #expect(governor.openConnections == 1 && governor.connectionsRefused == 1)
        #expect(try Self.connection(governor, from: "198.51.100.5").isActive)
    }
}
