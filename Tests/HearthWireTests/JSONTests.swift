import HearthWire
import PropertyBased
import Testing

@Suite("JSON and base64url")
struct JSONTests {
    @Test("parses what RFC 8259 allows, keeps integers, refuses everything else")
    func strictness() {
        #expect(
            JSONValue.parse(Array(#" {"a":[1,-2.5,1e3,true,null,"\u00e9\ud83d\ude00"]} "#.utf8))
                == ["a": [1, .double(-2.5), .double(1000), true, .null, .string("é😀")]])
        #expect(JSONValue.parse(Array("9223372036854775807".utf8)) == .int(.max))
        #expect(JSONValue.parse(Array("9223372036854775808".utf8)) == .double(9_223_372_036_854_775_808))
        for bad in [
            "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "NaN", "'a'", "\"\\x\"", "\"\\ud800\"", "\"a\nb\"",
            "[1] 2", "{a:1}", "tru", "\"\\u12\"",
        ] {
            #expect(JSONValue.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(JSONValue.parse([0x22, 0xff, 0x22]) == nil)  // invalid UTF-8
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JSONValue.parse(Array(deep.utf8)) == nil)
        let fine = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect(JSONValue.parse(Array(fine.utf8)) != nil)
    }

    @Test("encoding round-trips through the parser")
    func roundTrip() async {
        #expect(
            JSONValue.string("plain \"q\" \\ \n\t\u{1}\u{1f} é😀 end").encoded()
                == Array(#""plain \"q\" \\ \n\t\u0001\u001f é😀 end""#.utf8))
        await propertyCheck(input: Gen.int(in: 0...1_000_000).array(of: 0...12)) { numbers in
            var object: [String: JSONValue] = [:]
            for number in numbers {
                let value: JSONValue =
                    switch number % 5 {
                    case 0: .int(Int64(number) - 500_000)
                    case 1: .string(String(UnicodeScalar(UInt8(number % 128))) + "é\"\\\u{1}")
                    case 2: .array([.bool(number % 2 == 0), .null])
                    case 3: .double(Double(number) / 8)
                    default: .object(["k\(number)": .string("v")])
                    }
                object["key\(number % 7)"] = value
            }
            let value = JSONValue.object(object)
            #expect(JSONValue.parse(value.encoded()) == value)
        }
    }

    @Test("base64url matches the RFC 4648 vectors and round-trips every length")
    func base64url() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("+/8=") == [0xfb, 0xff])
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab$d") == nil)
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) % 256) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test("form encoding: '+' is a space, escapes decode, malformed fields are skipped")
    func formEncoding() {
        let fields = FormEncoding.fields("a=1&b=x+y%2Bz&c=%E2%9C%93&bad=%zz&half=%4&flag&d=%7B%22s%22%3A1%7D")
        #expect(fields.map(\.name) == ["a", "b", "c", "flag", "d"])
        #expect(fields.map(\.value) == ["1", "x y+z", "✓", "", #"{"s":1}"#])
        #expect(FormEncoding.decode(Array("%FF".utf8)) == nil)
    }
}

@Suite("IP addresses")
struct IPAddressTests {
    @Test func addressesParseAndNamesPortsAndZonesDoNot() {
        #expect(IPAddress("203.0.113.5")?.bytes == [203, 0, 113, 5])
        #expect(IPAddress("2001:db8::1")?.bytes.count == 16)
        for text in ["localhost", "203.0.113.5:80", "fe80::1%eth0", "", "1.2.3", "[::1]", " 1.2.3.4"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
    }

    @Test func mappedLoopbackAndSubscriberKeys() {
        #expect(IPAddress("::ffff:203.0.113.5")?.unmapped == IPAddress("203.0.113.5"))
        #expect(IPAddress("2001:db8::1")?.unmapped == IPAddress("2001:db8::1"))
        for loopback in ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"] { #expect(IPAddress(loopback)?.isLoopback == true) }
        for other in ["128.0.0.1", "::2", "::ffff:10.0.0.1", "0.0.0.0", "::"] { #expect(IPAddress(other)?.isLoopback == false) }
        #expect(IPAddress("2001:db8:1:2:3:4:5:6")?.subscriberKey == "2001:db8:1:2::/64")
        #expect(IPAddress("192.0.2.1")?.subscriberKey == "192.0.2.1")
    }
}
