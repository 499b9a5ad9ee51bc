import Testing

@Suite("the tests' TOTP generator")
struct TOTPGeneratorTests {
    /// RFC 6238 appendix B, SHA-1 (eight digits).
    @Test func rfc6238Vectors() {
        let generator = TOTPGenerator(secret: Array("12345678901234567890".utf8))
        let vectors: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (time, code) in vectors { #expect(generator.code(at: time, digits: 8) == code, "\(time)") }
    }

    @Test func base32Secret() {
        // "12345678901234567890" in base32.
        let generator = TOTPGenerator(base32: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(generator?.secret == Array("12345678901234567890".utf8))
        #expect(generator?.code(at: 59) == "287082")
    }
}
