import HearthWire
import Testing

@Suite("client addresses in the log: the network by default, the address only when chosen")
struct ClientAddressLoggingTests {
    @Test func eachPolicyShowsWhatItPromises() {
        #expect(ClientAddressLogging.network.render("203.0.113.77") == "203.0.113.0/24")
        #expect(ClientAddressLogging.network.render("2001:db8:1234:5678::9") == "2001:db8:1234::/48")
        #expect(ClientAddressLogging.network.render("::ffff:198.51.100.9") == "198.51.100.0/24")
        #expect(ClientAddressLogging.full.render("203.0.113.77") == "203.0.113.77")
        #expect(ClientAddressLogging.none.render("203.0.113.77") == "-")
        #expect(ClientAddressLogging.network.render(nil) == "-")
        #expect(ClientAddressLogging.full.render("not an address\nforged line") == "-")
    }
}
