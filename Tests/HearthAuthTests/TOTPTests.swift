import HearthAuth
import HearthWire
import Testing

@Suite("TOTP (RFC 6238) and HOTP (RFC 4226)")
struct TOTPTests {
    static let rfcSecret = Array("12345678901234567890".utf8)

    @Test func hotpVectors() {
        let codes = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in codes.enumerated() {
            #expect(String(decoding: TOTP.code(secret: Self.rfcSecret, step: Int64(counter)), as: UTF8.self) == code)
        }
    }

    @Test func totpVectors() {
        let vectors: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (time, code) in vectors {
            let text = String(decoding: TOTP.code(secret: Self.rfcSecret, step: TOTP.step(at: time), digits: 8), as: UTF8.self)
            #expect(text == code, "\(time)")
        }
    }

    @Test func aCodeMatchesWithinTheWindowOnly() {
        let now: Int64 = 1_800_000_015
        let step = TOTP.step(at: now)
        func code(_ offset: Int64) -> String { String(decoding: TOTP.code(secret: Self.rfcSecret, step: step + offset), as: UTF8.self) }
        #expect(TOTP.matchingStep(code(0), secret: Self.rfcSecret, at: now, adjacent: 0) == step)
        #expect(TOTP.matchingStep(code(-1), secret: Self.rfcSecret, at: now, adjacent: 0) == nil)
        #expect(TOTP.matchingStep(code(-2), secret: Self.rfcSecret, at: now, adjacent: 2) == step - 2)
        #expect(TOTP.matchingStep(code(3), secret: Self.rfcSecret, at: now, adjacent: 2) == nil)
        for wrong in ["", "12345", "1234567", "abcdef", code(0) + " "] {
            #expect(TOTP.matchingStep(wrong, secret: Self.rfcSecret, at: now, adjacent: 10) == nil, "\(wrong)")
        }
    }

    /// RFC 4648 §10.
    @Test func base32Vectors() {
        let vectors = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI"),
        ]
        for (text, encoded) in vectors {
            #expect(Base32.encode(Array(text.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(text.utf8))
            #expect(Base32.decode(encoded.lowercased() + "====") == Array(text.utf8))
        }
        #expect(Base32.decode("MZXW6YTBO1") == nil)
        #expect(Base32.decode("MZ") == nil)  // trailing bits that are not zero
    }
}
