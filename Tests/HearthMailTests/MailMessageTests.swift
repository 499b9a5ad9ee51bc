import Foundation
import HearthMail
import Testing

@Suite("mail: messages as RFC 5322 text")
struct MailMessageTests {
    @Test("headers are single lines, non-ASCII is encoded, the body is base64 of CRLF text")
    func rendering() throws {
        let message = MailMessage(
            fromName: "Café\r\nBcc: victim@example.com", fromAddress: "auth@example.com", to: "user@example.com\nBcc: x@y",
            subject: "Réinitialiser\r\nX-Injected: 1", text: "Hello,\n\n.dot first\nhttps://example.com/?a=1&b=2\n")
        let date = Date(timeIntervalSince1970: 1_795_000_000)
        let rendered = message.rendered(date: date, messageID: "abc")
        let (head, body) = try #require(Self.split(rendered))
        let headers = head.components(separatedBy: "\r\n")
        #expect(!headers.contains { $0.hasPrefix("Bcc") || $0.hasPrefix("X-Injected") })
        #expect(headers.contains("To: user@example.comBcc: x@y"))
        let subject = "=?UTF-8?B?" + Data("RéinitialiserX-Injected: 1".utf8).base64EncodedString() + "?="
        #expect(headers.contains("Subject: " + subject))
        #expect(headers.contains { $0.hasPrefix("From: =?UTF-8?B?") && $0.hasSuffix(" <auth@example.com>") })
        #expect(headers.contains("Date: Wed, 18 Nov 2026 11:06:40 +0000"))
        #expect(headers.contains("Message-ID: <abc@example.com>"))
        #expect(headers.contains("Content-Transfer-Encoding: base64"))
        let lines = body.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.allSatisfy { $0.count <= 76 })
        let decoded = try #require(Data(base64Encoded: lines.joined()))
        #expect(String(decoding: decoded, as: UTF8.self) == "Hello,\r\n\r\n.dot first\r\nhttps://example.com/?a=1&b=2\r\n")
    }

    /// Headers and body, split at the first empty line.
    static func split(_ rendered: String) -> (String, String)? {
        guard let range = rendered.range(of: "\r\n\r\n") else { return nil }
        return (String(rendered[..<range.lowerBound]), String(rendered[range.upperBound...]))
    }
}
