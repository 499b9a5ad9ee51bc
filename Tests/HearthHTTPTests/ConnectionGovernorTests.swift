import HearthWire
import Testing

@testable import HearthHTTP

/// The shares every connection is held to (issue 28); the real floods are in test_floods.py.
@Suite("connection governor: an address's share, the buffered-bytes budget")
struct ConnectionGovernorTests {
    @Test("one address holds at most an eighth of what is free, and its cap; a new address always gets in")
    func addressShares() throws {
        let governor = ConnectionGovernor(limits: .init(maxConnections: 1000, perAddress: 256))
        var flood: [ConnectionGovernor.Client] = []
        while let client = governor.admit("203.0.113.1") { flood.append(client) }
        #expect(flood.count == 111, "an eighth of the connections left free: h < (1000 - h) / 8")
        #expect(governor.connectionsRefused == 1)
        // Another address, and every further flooding one, takes an eighth of what is left.
        var total = flood.count
        for index in 2...20 {
            var mine = 0
            while governor.admit("203.0.113.\(index)") != nil { mine += 1 }
            #expect(mine >= 1)
            total += mine
        }
        #expect(total < 1000 && governor.openConnections == total)
        #expect(governor.admit("198.51.100.1") != nil, "an address holding none still gets in")
        // Closing gives room back; the same /64 is one IPv6 client.
        for client in flood { governor.release(client) }
        #expect(governor.admit("203.0.113.1") != nil)
        var sameSubscriber = 0
        while governor.admit("2001:db8:1:2::\(sameSubscriber + 1)") != nil { sameSubscriber += 1 }
        #expect(sameSubscriber >= 1 && sameSubscriber < 200)
    }

    @Test("the per-address cap holds below the share; trusted proxies (dual-stack too) and address-less callers are not counted")
    func capAndProxies() {
        let governor = ConnectionGovernor(
            limits: .init(maxConnections: 100_000, perAddress: 16, trustedProxies: [AddressRange("10.0.0.0/8")!]))
        var held = 0
        while governor.admit("192.0.2.7") != nil { held += 1 }
        #expect(held == 16)
        for _ in 0..<1000 { #expect(governor.admit("10.1.2.3") != nil) }
        for _ in 0..<1000 { #expect(governor.admit("::ffff:10.1.2.4") != nil) }
        for _ in 0..<1000 { #expect(governor.admit(nil) != nil) }
        // A dual-stack socket's IPv4 client is that IPv4 client.
        for _ in 0..<8 { #expect(governor.admit("::ffff:192.0.2.8") != nil) }
        for _ in 0..<8 { #expect(governor.admit("192.0.2.8") != nil) }
        #expect(governor.admit("192.0.2.8") == nil)
    }

    @Test("buffered bytes: never past the budget; large requests only three quarters of it; one address an eighth of what is free")
    func byteBudget() throws {
        let governor = ConnectionGovernor(limits: .init(bufferedBytes: 8 << 20))
        let proxy = ConnectionGovernor.Client(key: nil)  // a trusted proxy: no address share
        // Large bodies: 6 MiB of the 8 MiB at most.
        var large = 0
        while governor.charge(64 << 10, requestBytes: 1 << 20, by: proxy) { large += 64 << 10 }
        #expect(large == 6 << 20)
        #expect(governor.requestsRefused == 1)
        // Small requests still fit in the last quarter…
        var small = 0
        while governor.charge(1024, requestBytes: 1024, by: proxy) { small += 1024 }
        #expect(small == 2 << 20 && governor.bufferedRequestBytes == 8 << 20)
        // …and whatever is answered leaves the budget.
        governor.free(large + small, by: proxy)
        #expect(governor.bufferedRequestBytes == 0)

        // One address stops at a ninth of the budget; another still gets its share.
        let flooder = try #require(governor.admit("203.0.113.9"))
        var flooded = 0
        while governor.charge(16 << 10, requestBytes: 16 << 10, by: flooder) { flooded += 16 << 10 }
        #expect(flooded > 800 << 10 && flooded <= (8 << 20) / 9 + (16 << 10))
        let other = try #require(governor.admit("198.51.100.9"))
        #expect(governor.charge(64 << 10, requestBytes: 64 << 10, by: other))
        governor.free(flooded, by: flooder)
        #expect(governor.charge(16 << 10, requestBytes: 16 << 10, by: flooder))
    }
}
