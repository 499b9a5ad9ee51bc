import CoreMetrics
import HearthWire
import Synchronization

/// What every connection of one server shares (issue 28): how many connections each client
/// address holds, and how many bytes of requests not yet answered sit in memory. One address
/// can not hold every connection, and no number of connections can make the daemon buffer more
/// than `bufferedBytes`; both are checked per connection and per read, never per request
/// handler, so a flood costs a lock and an atomic add, not a request's work.
public final class ConnectionGovernor: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Connections served at once (the listener stops accepting there, too).
        public var maxConnections: Int
        /// Connections one client address may hold (an IPv6 client counts by its /64); the
        /// trusted proxies, which carry many clients each, are not limited.
        public var perAddress: Int
        /// Bytes of requests received and not yet answered, over every connection.
        public var bufferedBytes: Int
        /// A new connection must send a whole request head within this, or it is closed: a
        /// silent connection costs its holder nothing, and must not cost the daemon a minute.
        public var headTimeout: Duration
        public var trustedProxies: [AddressRange]

        public init(
            maxConnections: Int = 65_536, perAddress: Int = 256, bufferedBytes: Int = 64 << 20,
            headTimeout: Duration = .seconds(10), trustedProxies: [AddressRange] = []
        ) {
            self.maxConnections = max(1, maxConnections)
            self.perAddress = max(1, perAddress)
            self.bufferedBytes = max(1 << 20, bufferedBytes)
            self.headTimeout = headTimeout
            self.trustedProxies = trustedProxies
        }
    }

    public let limits: Limits
    private let connections = Mutex<Connections>(Connections())
    private let buffered = Atomic<Int>(0)
    private let refusedConnections = Atomic<Int>(0)
    private let refusedRequests = Atomic<Int>(0)
    private let refusedConnectionsMetric = Counter(label: "hearth_connections_refused_total")
    private let refusedRequestsMetric = Counter(label: "hearth_requests_refused_busy_total")

    private struct Connections {
        var open = 0
        var byAddress: [String: Int] = [:]
    }

    /// An address may hold at most this fraction of the connections still free (and never more
    /// than `perAddress`): each flooding address takes at most an eighth of what is left, so
    /// capacity is always left for an address that holds none, and k flooding addresses leave
    /// (7/8)^k of it to everyone else.
    static let shareOfFree = 8
    /// A request's first 64 KiB may use the whole byte budget; beyond that, a request may only
    /// use three quarters of it, so large bodies (an attacker's 1 MiB uploads) can not crowd out
    /// the small requests every SDK call is.
    static let smallRequest = 64 << 10

    public init(limits: Limits) {
        self.limits = limits
    }

    // MARK: Connections

    /// A connection from `address` opened: whether it may be served (else it is closed at once).
    /// `nil` when the transport has no address (in-process tests).
    func admit(_ address: String?) -> Bool {
        guard let key = key(address) else {
            connections.withLock { $0.open += 1 }
            return true
        }
        let admitted = connections.withLock { state -> Bool in
            let held = state.byAddress[key, default: 0]
            let free = limits.maxConnections - state.open
            guard held < limits.perAddress, held == 0 || held < free / Self.shareOfFree else { return false }
            state.open += 1
            state.byAddress[key] = held + 1
            return true
        }
        if !admitted {
            refusedConnections.add(1, ordering: .relaxed)
            refusedConnectionsMetric.increment()
        }
        return admitted
    }

    /// An admitted connection closed.
    func release(_ address: String?) {
        let key = key(address)
        connections.withLock { state in
            state.open -= 1
            guard let key, let held = state.byAddress[key] else { return }
            state.byAddress[key] = held > 1 ? held - 1 : nil
        }
    }

    /// Trusted proxies are not counted by address (each carries many clients); every other
    /// address by its subscriber key.
    private func key(_ address: String?) -> String? {
        guard let address, let parsed = IPAddress(address)?.unmapped else { return nil }
        if limits.trustedProxies.contains(where: { $0.contains(address) }) { return nil }
        return parsed.subscriberKey
    }

    // MARK: Buffered bytes

    /// `count` more bytes of a request that has received `requestBytes` so far (these
    /// included): whether they fit the budget (and are then charged to it).
    func charge(_ count: Int, requestBytes: Int) -> Bool {
        let budget = requestBytes > Self.smallRequest ? limits.bufferedBytes / 4 * 3 : limits.bufferedBytes
        let after = buffered.wrappingAdd(count, ordering: .relaxed).newValue
        guard after > budget else { return true }
        buffered.wrappingSubtract(count, ordering: .relaxed)
        refusedRequests.add(1, ordering: .relaxed)
        refusedRequestsMetric.increment()
        return false
    }

    /// Bytes charged earlier, now answered or abandoned.
    func free(_ count: Int) {
        guard count > 0 else { return }
        buffered.wrappingSubtract(count, ordering: .relaxed)
    }

    // MARK: Figures (metrics, tests)

    public var openConnections: Int { connections.withLock { $0.open } }
    public var bufferedRequestBytes: Int { buffered.load(ordering: .relaxed) }
    /// Connections closed at once for their address's share.
    public var connectionsRefused: Int { refusedConnections.load(ordering: .relaxed) }
    /// Requests answered 503 because the byte budget was spent.
    public var requestsRefused: Int { refusedRequests.load(ordering: .relaxed) }
}
