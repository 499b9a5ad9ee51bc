import Testing

@testable import HearthHTTP

/// The shares every connection is held to (issue 28); the real floods are in test_floods.py.
@Suite("connection governor: an address's share, the buffered-bytes budget")
struct ConnectionGovernorTests {
    @Test("one address holds at most an eighth of what is free, and its cap; a new address always gets in")
    func addressShares() {
        let governor = ConnectionGovernor(limits: .init(maxConnections: 1000, perAddress: 256))
        var held = 0
        while governor.admit("203.0.113.1") { held += 1 }
        #expect(held == 111, "an eighth of the connections left free: h < (1000 - h) / 8")
        #expect(governor.connectionsRefused == 1)
        // Another address, and every further flooding one, takes an eighth of what is left.
        var total = held
        for index in 2...20 {
            var mine = 0
            while governor.admit("203.0.113.\(index)") { mine += 1 }
            #expect(mine >= 1)
            total += mine
        }
        #expect(total < 1000 && governor.openConnections == total)
        #expect(governor.admit("198.51.100.1"), "an address holding none still gets in")
        // Closing gives room back; the same /64 is one IPv6 client.
        for _ in 0..<held { governor.release("203.0.113.1") }
        #expect(governor.admit("203.0.113.1"))
        #expect(governor.admit("2001:db8:1:2::1"))
        var sameSubscriber = 1
        while governor.admit("2001:db8:1:2::\(sameSubscriber + 1)") { sameSubscriber += 1 }
        #expect(sameSubscriber < 200)
    }

    @Test("the per-address cap holds below the share; trusted proxies and address-less callers are not counted by address")
    func capAndProxies() {
        let governor = ConnectionGovernor(
            limits: .init(maxConnections: 100_000, perAddress: 16, trustedProxies: [AddressRange("10.0.0.0/8")!]))
        var held = 0
        while governor.admit("192.0.2.7") { held += 1 }
        #expect(held == 16)
        for _ in 0..<1000 { #expect(governor.admit("10.1.2.3")) }
        for _ in 0..<1000 { #expect(governor.admit(nil)) }
        #expect(governor.admit("::ffff:192.0.2.8") && governor.admit("192.0.2.8"))
    }

    @Test("buffered bytes: the budget is never exceeded; past a request's first 64 KiB only three quarters of it")
    func byteBudget() {
        let governor = ConnectionGovernor(limits: .init(bufferedBytes: 4 << 20))
        // Large bodies: 3 MiB of the 4 MiB at most.
        var large = 0
        while governor.charge(64 << 10, requestBytes: 1 << 20) { large += 64 << 10 }
        #expect(large == 3 << 20)
        #expect(governor.requestsRefused == 1)
        // Small requests still fit in the last quarter…
        var small = 0
        while governor.charge(1024, requestBytes: 1024) { small += 1024 }
        #expect(small == 1 << 20 && governor.bufferedRequestBytes == 4 << 20)
        // …and whatever is answered leaves the budget.
        governor.free(large)
        #expect(governor.bufferedRequestBytes == 1 << 20)
        #expect(governor.charge(64 << 10, requestBytes: 1 << 20))
    }
}
