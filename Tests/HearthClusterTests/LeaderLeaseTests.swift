import PropertyBased
import Testing

@testable import HearthCluster

/// Fencing's arithmetic against etcd's, on a controllable clock: whatever the delays and losses
/// of the renewals, the leader never may acknowledge once etcd could have expired its lease.
@Suite("cluster: the leader lease's fencing deadline")
struct LeaderLeaseTests {
    static let base = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { base + .milliseconds(milliseconds) }

    @Test("a renewal moves the deadline to its send time plus the TTL less the margin, never back")
    func renewals() {
        var lease = LeaderLease(ttl: .seconds(5), margin: .seconds(1), grantSentAt: Self.at(0))
        #expect(lease.deadline == Self.at(4_000))
        #expect(lease.mayAcknowledge(at: Self.at(3_999)))
        #expect(!lease.mayAcknowledge(at: Self.at(4_000)))
        lease.renewed(sentAt: Self.at(1_000))
        #expect(lease.deadline == Self.at(5_000))
        // A late answer to an older renewal.
        lease.renewed(sentAt: Self.at(500))
        #expect(lease.deadline == Self.at(5_000))
    }

    @Test("the margin: a fifth of the TTL, at least 200 ms")
    func margins() {
        #expect(LeaderLease.margin(for: .seconds(5)) == .seconds(1))
        #expect(LeaderLease.margin(for: .seconds(30)) == .seconds(6))
        #expect(LeaderLease.margin(for: .milliseconds(500)) == .milliseconds(200))
    }

    /// One renewal as the network treats it: sent `gap` ms after the previous answer (or
    /// timeout), processed by etcd `processing` ms later unless lost, answered `answer` ms after.
    struct Renewal {
        var gap: Int
        var processing: Int
        var answer: Int
        var lost: Bool

        init(_ n: Int) {
            gap = n % 1_500
            processing = (n / 1_500) % 2_500
            answer = (n / 7) % 1_200
            lost = n % 9 == 0
        }
    }

    @Test("whatever the delays and losses, the leader acknowledges only while etcd holds its lease")
    func neverPastEtcdsExpiry() async {
        let ttl = 5_000
        let timeout = 1_000
        await propertyCheck(count: 300, input: Gen.int(in: 0...10_000_000).array(of: 1...40)) { numbers in
            let renewals = numbers.map(Renewal.init)
            var lease = LeaderLease(ttl: .milliseconds(ttl), margin: .milliseconds(ttl / 5), grantSentAt: Self.at(0))
            // etcd processed the grant at some point after it was sent; its expiry counts from there.
            var etcdExpiry = (renewals.first?.processing ?? 0) % 300 + ttl
            var expired = false
            // Answers the leader heard (time heard, send time), in the order they arrive.
            var heard: [(at: Int, sent: Int)] = []
            // (time, etcd's expiry from then on), as etcd processes renewals.
            var expiries: [(at: Int, expiry: Int)] = [(0, etcdExpiry)]
            var now = 0
            for renewal in renewals {
                let sent = now + renewal.gap
                let processed = sent + renewal.processing
                if renewal.lost {
                    now = sent + timeout
                    continue
                }
                if expired || processed >= etcdExpiry {
                    // The lease is gone: the session ends here.
                    expired = true
                    break
                }
                etcdExpiry = processed + ttl
                expiries.append((processed, etcdExpiry))
                let answered = processed + renewal.answer
                if renewal.answer + renewal.processing <= timeout { heard.append((answered, sent)) }
                now = min(answered, sent + timeout)
            }
            heard.sort { $0.at < $1.at }
            var next = 0
            var t = 0
            let end = (expiries.last?.expiry ?? 0) + 2 * ttl
            while t < end {
                while next < heard.count && heard[next].at <= t {
                    lease.renewed(sentAt: Self.at(heard[next].sent))
                    next += 1
                }
                if lease.mayAcknowledge(at: Self.at(t)) {
                    // etcd's expiry as of t: the last processed renewal at or before t.
                    let expiry = expiries.last { $0.at <= t }!.expiry
                    #expect(t < expiry, "acknowledging at \(t) ms, etcd expires the lease at \(expiry) ms")
                }
                t += 25
            }
        }
    }

    @Test("renewed on time, a leader keeps the right to write throughout")
    func steadyRenewalsNeverFence() {
        var lease = LeaderLease(ttl: .seconds(5), margin: .seconds(1), grantSentAt: Self.at(0))
        for second in 1...60 {
            // Sent each second, answered 300 ms later.
            #expect(lease.mayAcknowledge(at: Self.at(second * 1_000 + 299)))
            lease.renewed(sentAt: Self.at(second * 1_000))
        }
        #expect(lease.deadline == Self.at(64_000))
    }
}
