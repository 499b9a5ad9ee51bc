import Crypto
import Foundation

/// A public key pin: SHA-256 over a certificate's DER SubjectPublicKeyInfo, as `openssl x509
/// -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints
/// it (HPKP's and OkHttp's `sha256/…` form is accepted too). The bridge checks it against the
/// upstream's own certificate after the chain verified: pin the next key beside the current
/// one before rotating.
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    public let digest: [UInt8]

    public init(_ text: String) throws {
        let base64 = text.hasPrefix("sha256/") ? String(text.dropFirst("sha256/".count)) : text
        guard let data = Data(base64Encoded: base64), data.count == 32 else { throw BridgeError.invalidPin(text) }
        digest = [UInt8](data)
    }

    init(digest: [UInt8]) { self.digest = digest }

    /// The pin of the key a DER certificate carries; nil when the bytes are not a certificate.
    public static func of(certificateDER der: [UInt8]) -> SPKIPin? {
        guard let info = DER.subjectPublicKeyInfo(ofCertificate: der) else { return nil }
        return SPKIPin(digest: [UInt8](SHA256.hash(data: info)))
    }

    public var description: String { Data(digest).base64EncodedString() }
}

extension [SPKIPin] {
    /// Whether a certificate satisfies the pins: always without any, else its key is one of them.
    func admit(certificateDER der: [UInt8]) -> Bool {
        guard !isEmpty else { return true }
        guard let pin = SPKIPin.of(certificateDER: der) else { return false }
        return contains(pin)
    }
}

/// Just enough DER to find a certificate's SubjectPublicKeyInfo (RFC 5280 §4.1): the pin is
/// computed the same way on every platform, from the bytes the TLS stack verified.
enum DER {
    struct Element {
        let tag: UInt8
        /// The whole element, tag and length included.
        let encoded: ArraySlice<UInt8>
        let content: ArraySlice<UInt8>
    }

    static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> ArraySlice<UInt8>? {
        guard let certificate = element(at: der.startIndex, in: der[...]), certificate.tag == 0x30,
            certificate.encoded.endIndex == der.endIndex,
            let tbs = element(at: certificate.content.startIndex, in: certificate.content), tbs.tag == 0x30
        else { return nil }
        // version [0] (optional), serialNumber, signature, issuer, validity, subject, then the key.
        var fields = children(of: tbs.content)
        if fields.first?.tag == 0xA0 { fields.removeFirst() }
        guard fields.count >= 6, fields[0].tag == 0x02, fields[1...5].allSatisfy({ $0.tag == 0x30 }) else { return nil }
        return fields[5].encoded
    }

    static func children(of content: ArraySlice<UInt8>) -> [Element] {
        var elements: [Element] = []
        var index = content.startIndex
        while index < content.endIndex, let next = element(at: index, in: content) {
            elements.append(next)
            index = next.encoded.endIndex
        }
        return index == content.endIndex ? elements : []
    }

    /// One tag-length-value at `index`, nil when it does not fit in `bytes` (low tag numbers
    /// and definite lengths only, which is all DER certificates use).
    static func element(at index: Int, in bytes: ArraySlice<UInt8>) -> Element? {
        guard index + 2 <= bytes.endIndex, bytes[index] & 0x1F != 0x1F else { return nil }
        var cursor = index + 1
        let first = Int(bytes[cursor])
        cursor += 1
        var length = first
        if first >= 0x80 {
            let count = first & 0x7F
            guard (1...4).contains(count), cursor + count <= bytes.endIndex else { return nil }
            length = 0
            for byte in bytes[cursor..<cursor + count] { length = length << 8 | Int(byte) }
            cursor += count
        }
        guard length <= bytes.endIndex - cursor else { return nil }
        return Element(tag: bytes[index], encoded: bytes[index..<cursor + length], content: bytes[cursor..<cursor + length])
    }
}

/// PEM files: the certificates of a CA bundle, as DER.
enum PEM {
    static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw BridgeError.unreadable(path)
        }
        return text
    }

    static func certificates(in text: String) throws -> [[UInt8]] {
        var certificates: [[UInt8]] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----", let base64 = body {
                guard let der = Data(base64Encoded: base64) else { throw BridgeError.invalidSetting("a PEM certificate is not base64") }
                certificates.append([UInt8](der))
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return certificates
    }
}
