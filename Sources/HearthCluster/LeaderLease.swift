/// When a leader must stop acknowledging writes: the arithmetic of fencing, kept apart from
/// the network so it can be tested against any history of renewals.
///
/// etcd expires a lease `ttl` after it last *processed* a renewal (or the grant), by its own
/// clock. The leader cannot know when that was, only when it *sent* the request, which was
/// earlier. So it counts from the send: a renewal sent at `s` and answered with success keeps
/// it leader until `s + ttl - margin`, strictly before etcd could expire the lease and grant the
/// leader key to anyone else. The margin covers the clocks' rates differing and the time from
/// the write path's check to its answer. A renewal that fails, or never returns, moves nothing,
/// and a late answer to an older renewal never moves the deadline back.
public struct LeaderLease: Sendable, Equatable {
    public let ttl: Duration
    public let margin: Duration
    /// The last instant at which this node may acknowledge a write, exclusive.
    public private(set) var deadline: ContinuousClock.Instant

    /// A lease granted by a request sent at `sentAt`, with the TTL etcd answered.
    public init(ttl: Duration, margin: Duration, grantSentAt sentAt: ContinuousClock.Instant) {
        precondition(margin >= .zero && margin < ttl, "the margin is part of the TTL")
        self.ttl = ttl
        self.margin = margin
        deadline = sentAt + ttl - margin
    }

    /// A renewal sent at `sentAt` succeeded.
    public mutating func renewed(sentAt: ContinuousClock.Instant) {
        deadline = max(deadline, sentAt + ttl - margin)
    }

    public func mayAcknowledge(at now: ContinuousClock.Instant) -> Bool { now < deadline }

    /// The margin a TTL gets: a fifth of it, at least 200 ms (1 s for the default 5 s lease).
    public static func margin(for ttl: Duration) -> Duration {
        max(ttl / 5, .milliseconds(200))
    }
}
