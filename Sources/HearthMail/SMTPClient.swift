import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Submits mail to a relay over SMTP (RFC 5321): greeting, EHLO, STARTTLS or implicit TLS,
/// AUTH PLAIN/LOGIN, then each message as MAIL FROM, RCPT TO, DATA in one session.
public struct SMTPClient: Sendable {
    public let settings: SMTPSettings
    private let tlsContext: NIOSSLContext?
    private let group: any EventLoopGroup

    public init(settings: SMTPSettings, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.settings = settings
        self.group = group
        if settings.security == .none {
            tlsContext = nil
        } else {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let file = settings.trustRootsFile { tls.additionalTrustRoots = [.file(file)] }
            tlsContext = try NIOSSLContext(configuration: tls)
        }
    }

    /// Sends `messages` in one session and returns each one's outcome, in order. Throws when
    /// the session fails before the first message (connection, TLS, greeting, authentication):
    /// then none was sent.
    public func send(_ messages: [MailMessage], date: Date = Date()) async throws -> [Result<Void, SMTPError>] {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(15))
            .connect(host: settings.host, port: settings.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if settings.security == .tls { try channel.pipeline.syncOperations.addHandler(try tlsHandler()) }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    return try NIOAsyncChannel<SMTPReply, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        // The deadline closes the connection; whatever was waiting then sees it closed.
        let timedOut = Atomic<Bool>(false)
        let deadline = Task { [timeout = settings.timeout] in
            try await Task.sleep(for: timeout)
            timedOut.store(true, ordering: .relaxed)
            channel.channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var session = Session(replies: inbound.makeAsyncIterator(), outbound: outbound)
                try await open(&session, channel: channel.channel)
                var results: [Result<Void, SMTPError>] = []
                for message in messages {
                    do {
                        try await session.submit(message, rendered: message.rendered(date: date, messageID: Self.messageID()))
                        results.append(.success(()))
                    } catch {
                        // Whatever went before was accepted, so a failure here is this message's own.
                        let failure = (error as? SMTPError) ?? .connectionClosed
                        results.append(.failure(failure))
                        // A refused message leaves the session usable once reset; anything else ends it,
                        // and the messages not yet tried are worth another session.
                        guard case .refused = failure, (try? await session.command("RSET", expect: [250], step: "RSET")) != nil
                        else { break }
                    }
                }
                while results.count < messages.count { results.append(.failure(.connectionClosed)) }
                _ = try? await session.command("QUIT", expect: [221], step: "QUIT")
                return results
            }
        } catch {
            throw timedOut.load(ordering: .relaxed) ? SMTPError.timedOut : error
        }
    }

    /// Greeting, EHLO, TLS upgrade and authentication.
    private func open(_ session: inout Session, channel: any Channel) async throws {
        try await session.expect([220], step: "greeting")
        var features = try await session.hello(settings.clientName)
        if settings.security == .startTLS {
            guard features.offers("STARTTLS") else { throw SMTPError.extensionMissing("STARTTLS") }
            try await session.command("STARTTLS", expect: [220], step: "STARTTLS")
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(try tlsHandler(), position: .first)
            }.get()
            features = try await session.hello(settings.clientName)
        }
        guard let username = settings.username, let password = settings.password else { return }
        let mechanisms = features.parameters(of: "AUTH")
        if mechanisms.contains("PLAIN") {
            let credentials = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            try await session.command("AUTH PLAIN \(credentials)", expect: [235], step: "AUTH")
        } else if mechanisms.contains("LOGIN") {
            try await session.command("AUTH LOGIN", expect: [334], step: "AUTH")
            try await session.command(Data(username.utf8).base64EncodedString(), expect: [334], step: "AUTH")
            try await session.command(Data(password.utf8).base64EncodedString(), expect: [235], step: "AUTH")
        } else {
            throw SMTPError.extensionMissing("AUTH PLAIN or LOGIN")
        }
    }

    private func tlsHandler() throws -> NIOSSLClientHandler {
        // SNI takes a name, never an address; certificates for an address are checked against it.
        let isAddress = (try? SocketAddress(ipAddress: settings.host, port: 0)) != nil
        return try NIOSSLClientHandler(context: tlsContext!, serverHostname: isAddress ? nil : settings.host)
    }

    static func messageID() -> String {
        UUID().uuidString.lowercased() + ".hearth"
    }
}

/// One SMTP conversation: a command, then its reply.
private struct Session {
    var replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    @discardableResult
    mutating func expect(_ codes: Set<Int>, step: String) async throws -> SMTPReply {
        guard let reply = try await replies.next() else { throw SMTPError.connectionClosed }
        guard codes.contains(reply.code) else {
            throw SMTPError.refused(step: step, code: reply.code, text: reply.lines.joined(separator: " "))
        }
        return reply
    }

    @discardableResult
    mutating func command(_ line: String, expect codes: Set<Int>, step: String) async throws -> SMTPReply {
        try await outbound.write(ByteBuffer(string: line + "\r\n"))
        return try await expect(codes, step: step)
    }

    mutating func hello(_ name: String) async throws -> Features {
        Features(reply: try await command("EHLO \(name)", expect: [250], step: "EHLO"))
    }

    mutating func submit(_ message: MailMessage, rendered: String) async throws {
        let utf8 = message.needsSMTPUTF8 ? " SMTPUTF8" : ""
        try await command("MAIL FROM:<\(MailMessage.singleLine(message.fromAddress))>\(utf8)", expect: [250], step: "MAIL FROM")
        try await command("RCPT TO:<\(MailMessage.singleLine(message.to))>", expect: [250, 251], step: "RCPT TO")
        try await command("DATA", expect: [354], step: "DATA")
        // Dot-stuffing: a line that starts with "." gets another, so only "\r\n.\r\n" ends the data.
        var data = ""
        for line in rendered.split(separator: "\r\n", omittingEmptySubsequences: false).dropLast() {
            data += (line.hasPrefix(".") ? "." : "") + line + "\r\n"
        }
        try await outbound.write(ByteBuffer(string: data + ".\r\n"))
        try await expect([250], step: "message")
    }
}

/// The extensions an EHLO reply lists (after its first line, the server's greeting).
private struct Features {
    let keywords: [String: [String]]

    init(reply: SMTPReply) {
        var keywords: [String: [String]] = [:]
        for line in reply.lines.dropFirst() {
            let words = line.uppercased().split(separator: " ").map(String.init)
            if let keyword = words.first { keywords[keyword] = Array(words.dropFirst()) }
        }
        self.keywords = keywords
    }

    func offers(_ keyword: String) -> Bool { keywords[keyword] != nil }
    func parameters(of keyword: String) -> [String] { keywords[keyword] ?? [] }
}
