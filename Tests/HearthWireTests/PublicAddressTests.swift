import HearthWire
import Testing

/// Which addresses count as the public internet, in every spelling: what a provider's host
/// must resolve to, and what a trusted proxy's range is matched against.
@Suite("addresses: public or not, and CIDR ranges")
struct PublicAddressTests {
    @Test("special-purpose addresses are not public, in every spelling; the internet's are")
    func publicAddresses() {
        let inside = [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
            "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::127.0.0.1", "::a9fe:a9fe", "::ffff:0:a9fe:a9fe",
        ]
        for text in inside { #expect(IPAddress(text)?.isPublic == false, "\(text)") }
        for text in ["8.8.8.8", "140.82.112.3", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
            #expect(IPAddress(text)?.isPublic == true, "\(text)")
        }
        #expect(IPNetwork("127.0.0.1/32")?.contains(IPAddress("::ffff:127.0.0.1")!) == true)
        #expect(IPNetwork("10.0.0.0/8")?.contains(IPAddress("11.0.0.1")!) == false)
        #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("example.com") == nil)
        #expect(IPAddress("2001:db8:0:0:1:0:0:1")?.description == "2001:db8::1:0:0:1")
    }
}
