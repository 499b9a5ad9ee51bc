import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small SMTP server on a loopback port, for the client and the queue to talk to: it speaks
/// the submission dialogue (EHLO with AUTH, MAIL, RCPT, DATA, RSET, QUIT), records every command
/// and every message, and answers RCPT TO with the replies it is given, in order (then 250).
final class FakeRelay: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Mutex<(commands: [String], messages: [String], rcptReplies: [String])>(([], [], []))

    init(rcptReplies: [String] = []) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        state.withLock { $0.rcptReplies = rcptReplies }
        Thread.detachNewThread { [self] in
            // Closed here, once accept fails after `stop`: closing it there could let another
            // relay's socket take its number while this thread is about to accept on it.
            defer { close(listener) }
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 { return }
                serve(connection)
                close(connection)
            }
        }
    }

    var commands: [String] { state.withLock { $0.commands } }
    var messages: [String] { state.withLock { $0.messages } }

    /// Stops listening: `accept` fails, and the thread closes the socket.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve(_ connection: Int32) {
        var reader = LineReader(socket: connection)
        func say(_ reply: String) { _ = reply.utf8CString.withUnsafeBufferPointer { send(connection, $0.baseAddress, $0.count - 1, 0) } }
        say("220 fake.relay ESMTP\r\n")
        while let line = reader.line() {
            state.withLock { $0.commands.append(line) }
            let verb = line.split(separator: " ").first.map { $0.uppercased() } ?? ""
            switch verb {
            case "EHLO": say("250-fake.relay\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n")
            case "AUTH": say("235 2.7.0 accepted\r\n")
            case "MAIL", "RSET": say("250 ok\r\n")
            case "RCPT":
                let reply = state.withLock { $0.rcptReplies.isEmpty ? "250 ok" : $0.rcptReplies.removeFirst() }
                say(reply + "\r\n")
            case "DATA":
                say("354 go on\r\n")
                var message: [String] = []
                while let dataLine = reader.line(), dataLine != "." { message.append(dataLine) }
                state.withLock { $0.messages.append(message.joined(separator: "\r\n")) }
                say("250 queued\r\n")
            case "QUIT":
                say("221 bye\r\n")
                return
            default: say("500 what\r\n")
            }
        }
    }
}

/// CRLF-terminated lines from a socket.
private struct LineReader {
    let socket: Int32
    var buffer: [UInt8] = []

    mutating func line() -> String? {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[..<end].last == UInt8(ascii: "\r") ? buffer[..<(end - 1)] : buffer[..<end]
                defer { buffer.removeFirst(end + 1) }
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }
}
