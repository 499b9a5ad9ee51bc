import Foundation
import Testing

@testable import HearthBridge

/// The pin is computed from the certificate's DER on every platform; here it is checked
/// against OpenSSL's own computation of the same key's digest.
@Suite("SPKI pins")
struct SPKIPinTests {
    static func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = output
        process.standardInput = inputPipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(input) }
        try inputPipe.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openssl \(arguments)")
        return data
    }

    @Test("the digest of an RSA and an EC certificate's key matches openssl's", arguments: ["rsa:2048", "ec"])
    func matchesOpenSSL(_ algorithm: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        var request = ["req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", key, "-out", certificate]
        request += algorithm == "ec" ? ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"] : ["-newkey", algorithm]
        _ = try Self.openssl(request)
        let der = try Self.openssl(["x509", "-in", certificate, "-outform", "der"])
        let publicKey = try Self.openssl(["x509", "-in", certificate, "-pubkey", "-noout"])
        let spki = try Self.openssl(["pkey", "-pubin", "-outform", "der"], input: publicKey)
        let expected = try Self.openssl(["dgst", "-sha256", "-binary"], input: spki).base64EncodedString()

        let pin = try #require(SPKIPin.of(certificateDER: [UInt8](der)))
        #expect(pin.description == expected)
        #expect([try SPKIPin(expected)].admit(certificateDER: [UInt8](der)))
        #expect([try SPKIPin("sha256/" + expected)].admit(certificateDER: [UInt8](der)))
        #expect(![try SPKIPin(Data(repeating: 7, count: 32).base64EncodedString())].admit(certificateDER: [UInt8](der)))
        let pem = try String(contentsOfFile: certificate, encoding: .utf8)
        #expect(try PEM.certificates(in: pem + pem) == [[UInt8](der), [UInt8](der)])
    }

    @Test("malformed pins and certificates are refused, never read out of bounds")
    func malformed() throws {
        for text in ["", "abc", Data(repeating: 1, count: 31).base64EncodedString(), "sha1/" + Data(count: 32).base64EncodedString()] {
            #expect(throws: BridgeError.self, "\(text)") { try SPKIPin(text) }
        }
        for der: [UInt8] in [[], [0x30], [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], [0x30, 0x03, 0x30, 0x01, 0x02], [0x30, 0x00, 0x00]] {
            #expect(SPKIPin.of(certificateDER: der) == nil)
            #expect(![try SPKIPin(Data(count: 32).base64EncodedString())].admit(certificateDER: der))
        }
        // Every truncation of a real certificate is refused, not misread.
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(SPKIPin.of(certificateDER: [0x30, 0x82, 0x01, 0xFC] + noise[..<508]) == nil)
    }
}
