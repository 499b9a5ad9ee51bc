import CoreMetrics
import HearthWire
import Synchronization

/// What every connection of one server shares (issue 28): how many connections each client
/// address holds, and how many bytes of requests not yet answered sit in memory, in all and per
/// address. One address can not hold every connection nor the whole byte budget, and no number
/// of connections can make the daemon buffer more than `bufferedBytes`. Checked per connection
/// and per read, never per request handler, so a flood costs a lock, not a request's work.
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

    /// A connection the governor admitted: whose share it counts against.
    struct Client: Sendable {
        /// The address's subscriber key; `nil` for a trusted proxy or a caller without an address.
        let key: String?
    }

    public let limits: Limits
    private let state = Mutex<State>(State())
    private let refusedConnectionsMetric = Counter(label: "hearth_connections_refused_total")
    private let refusedRequestsMetric = Counter(label: "hearth_requests_refused_busy_total")

    private struct State {
        var open = 0
        var connections: [String: Int] = [:]
        var buffered = 0
        var bytes: [String: Int] = [:]
        var refusedConnections = 0
        var refusedRequests = 0
    }

    /// An address may hold at most this fraction of what is still free, connections or bytes
    /// (and never more than `perAddress` connections): a flooding address stops at a ninth of
    /// the whole (h < (total - h) / 8), so capacity is always left for an address that holds
    /// none, and k flooding addresses leave (8/9)^k of it to everyone else.
    static let shareOfFree = 8
    /// A request's first 64 KiB may use the whole byte budget; beyond that, a request may only
    /// use three quarters of it, so large bodies (an attacker's 1 MiB uploads) leave a quarter
    /// for the small requests every SDK call is.
    static let smallRequest = 64 << 10

    public init(limits: Limits) {
        self.limits = limits
    }

    // MARK: Connections

    /// A connection from `address` opened: the client it counts as, or `nil` when it may not be
    /// served (it is closed at once). `address` is `nil` when the transport has none (in-process tests).
    func admit(_ address: String?) -> Client? {
        let key = key(address)
        let admitted = state.withLock { state -> Bool in
            guard let key else {
                state.open += 1
                return true
            }
            let held = state.connections[key, default: 0]
            let free = limits.maxConnections - state.open
            guard held < limits.perAddress, held == 0 || held < free / Self.shareOfFree else {
                state.refusedConnections += 1
                return false
            }
            state.open += 1
            state.connections[key] = held + 1
            return true
        }
        guard admitted else {
            refusedConnectionsMetric.increment()
            return nil
        }
        return Client(key: key)
    }

    /// An admitted connection closed.
    func release(_ client: Client) {
        state.withLock { state in
            state.open -= 1
            guard let key = client.key, let held = state.connections[key] else { return }
            state.connections[key] = held > 1 ? held - 1 : nil
        }
    }

    /// Trusted proxies are not counted by address (each carries many clients); every other
    /// address by its subscriber key (an IPv4 client of a dual-stack socket by its IPv4 address).
    private func key(_ address: String?) -> String? {
        guard let address, let parsed = IPAddress(address)?.unmapped else { return nil }
        if limits.trustedProxies.contains(where: { $0.contains(parsed) }) { return nil }
        return parsed.subscriberKey
    }

    // MARK: Buffered bytes

    /// `count` more bytes from `client` of a request that has received `requestBytes` so far
    /// (these included): whether they fit the budget and the client's share of what is free
    /// (and are then charged to both).
    func charge(_ count: Int, requestBytes: Int, by client: Client) -> Bool {
        let budget = requestBytes > Self.smallRequest ? limits.bufferedBytes / 4 * 3 : limits.bufferedBytes
        let charged = state.withLock { state -> Bool in
            guard state.buffered + count <= budget else {
                state.refusedRequests += 1
                return false
            }
            if let key = client.key {
                let held = state.bytes[key, default: 0]
                guard held == 0 || held + count <= (limits.bufferedBytes - state.buffered) / Self.shareOfFree else {
                    state.refusedRequests += 1
                    return false
                }
                state.bytes[key] = held + count
            }
            state.buffered += count
            return true
        }
        if !charged { refusedRequestsMetric.increment() }
        return charged
    }

    /// Bytes `client` was charged earlier, now answered or abandoned.
    func free(_ count: Int, by client: Client) {
        guard count > 0 else { return }
        state.withLock { state in
            state.buffered -= count
            guard let key = client.key, let held = state.bytes[key] else { return }
            state.bytes[key] = held > count ? held - count : nil
        }
    }

    // MARK: Figures (metrics, tests)

    public var openConnections: Int { state.withLock { $0.open } }
    public var bufferedRequestBytes: Int { state.withLock { $0.buffered } }
    /// Connections closed at once for their address's share.
    public var connectionsRefused: Int { state.withLock { $0.refusedConnections } }
    /// Requests answered 503 because the byte budget, or the address's share of it, was spent.
    public var requestsRefused: Int { state.withLock { $0.refusedRequests } }
}
