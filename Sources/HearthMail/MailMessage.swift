import Crypto
import Foundation

/// One plain-text email, rendered as RFC 5322 with a MIME UTF-8 body. Header values are
/// stripped of line breaks, so nothing a user typed can add a header.
public struct MailMessage: Sendable, Equatable {
    public var fromName: String?
    public var fromAddress: String
    public var to: String
    public var subject: String
    public var text: String

    public init(fromName: String? = nil, fromAddress: String, to: String, subject: String, text: String) {
        self.fromName = fromName
        self.fromAddress = fromAddress
        self.to = to
        self.subject = subject
        self.text = text
    }

    /// Addresses outside ASCII need the server's SMTPUTF8 extension.
    var needsSMTPUTF8: Bool { !(fromAddress + to).allSatisfy(\.isASCII) }

    /// Headers and the base64 body, CRLF line ends, not yet dot-stuffed.
    /// The recipient as the logs name it: `sha256:` and the first 12 hex digits of the SHA-256
    /// of the lowercased address. The address itself is personal data and never logged; an
    /// operator who knows one finds its lines with `printf %s user@example.com | sha256sum`.
    public var recipientDigest: String {
        "sha256:" + SHA256.hash(data: Data(to.lowercased().utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// `text` (a relay's reply, which often repeats the address) with the recipient's address
    /// replaced by its digest, in any letter case.
    public func withoutRecipient(_ text: String) -> String {
        var redacted = text
        while let range = redacted.range(of: to, options: .caseInsensitive) {
            redacted.replaceSubrange(range, with: recipientDigest)
        }
        return redacted
    }

    public func rendered(date: Date, messageID: String) -> String {
        let from = fromName.map { "\(Self.headerText($0)) <\(Self.singleLine(fromAddress))>" } ?? Self.singleLine(fromAddress)
        let domain = fromAddress.split(separator: "@").last.map(String.init) ?? "localhost"
        var lines = [
            "From: \(from)",
            "To: \(Self.singleLine(to))",
            "Subject: \(Self.headerText(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(messageID)@\(Self.singleLine(domain))>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        // CRLF line ends in the text, then base64 in lines of 76 (RFC 2045).
        let body = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        let encoded = Data(body.utf8).base64EncodedString()
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[start..<end]))
            start = end
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func singleLine(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
    }

    /// ASCII as is; anything else as an RFC 2047 encoded word.
    static func headerText(_ value: String) -> String {
        let line = singleLine(value)
        if line.allSatisfy({ $0.isASCII }) { return line }
        return "=?UTF-8?B?\(Data(line.utf8).base64EncodedString())?="
    }

    static func rfc5322Date(_ date: Date) -> String {
        date.formatted(
            Date.VerbatimFormatStyle(
                format:
                    "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) +0000",
                locale: Locale(identifier: "en_US_POSIX"), timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }
}
