import HearthAuth
import HearthWire

/// How long connections may idle and requests may take, how many connections and buffered bytes
/// are served at once, and the abuse limits.
public struct LimitsSettings: Sendable, Equatable {
    public var idleTimeoutSeconds = 60
    public var requestTimeoutSeconds = 10
    public var requestMinBytesPerSecond = 1024
    public var requestTimeoutMaxSeconds = 60
    /// `nil`: derived from the descriptor limit at start, less a reserve (`ConnectionLimit`).
    public var maxConnections: Int?
    public var maxConnectionsPerAddress = 256
    public var maxBufferedRequestBytes = 64 << 20
    public var requestHeadTimeoutSeconds = 10
    /// The `limits` setting, read by `AbuseLimitSettings`.
    public var abuse: JSONValue?

    public init() {}

    public struct Valid: Sendable, Equatable {
        public let idleTimeoutSeconds: Int
        public let requestTimeoutSeconds: Int
        public let requestMinBytesPerSecond: Int
        public let requestTimeoutMaxSeconds: Int
        public let maxConnections: Int?
        public let maxConnectionsPerAddress: Int
        public let maxBufferedRequestBytes: Int
        public let requestHeadTimeoutSeconds: Int
        public let abuse: AbuseLimitPolicy?
    }

    func validated(_ profile: Profile) throws -> Valid {
        try Self.check("idleTimeoutSeconds", idleTimeoutSeconds, 1...3600)
        try Self.check("requestTimeoutSeconds", requestTimeoutSeconds, 1...3600)
        try Self.check(
            "requestTimeoutMaxSeconds (at least requestTimeoutSeconds)", requestTimeoutMaxSeconds,
            max(1, requestTimeoutSeconds)...3600)
        try Self.check("requestMinBytesPerSecond", requestMinBytesPerSecond, 1...Int.max)
        if let maxConnections { try Self.check("maxConnections", maxConnections, 1...Int.max) }
        try Self.check("maxConnectionsPerAddress", maxConnectionsPerAddress, 1...Int.max)
        // A whole request (1 MiB) must fit, with room for others beside it.
        try Self.check("maxBufferedRequestBytes (at least 4 MiB)", maxBufferedRequestBytes, (4 << 20)...Int.max)
        try Self.check("requestHeadTimeoutSeconds", requestHeadTimeoutSeconds, 1...3600)
        return Valid(
            idleTimeoutSeconds: idleTimeoutSeconds, requestTimeoutSeconds: requestTimeoutSeconds,
            requestMinBytesPerSecond: requestMinBytesPerSecond, requestTimeoutMaxSeconds: requestTimeoutMaxSeconds,
            maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress,
            maxBufferedRequestBytes: maxBufferedRequestBytes, requestHeadTimeoutSeconds: requestHeadTimeoutSeconds,
            abuse: try AbuseLimitSettings.policy(abuse, profile: profile))
    }

    static func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>) throws {
        guard range.contains(value) else { throw ConfigurationError.invalid(name, source: "\(value)") }
    }
}
