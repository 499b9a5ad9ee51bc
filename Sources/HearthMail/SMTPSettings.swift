/// Where and how mail is submitted: a relay (the operator's MTA or a provider's submission port).
public struct SMTPSettings: Sendable, Equatable {
    public enum Security: String, Sendable, CaseIterable {
        /// Plain TCP, then `STARTTLS` before anything else is said (submission, port 587).
        case startTLS = "starttls"
        /// TLS from the first byte (port 465).
        case tls
        /// No TLS: only for a relay on loopback or a trusted network.
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// A PEM bundle trusted besides the system's roots (a private relay's CA).
    public var trustRootsFile: String?
    /// The name Hearth gives in `EHLO`.
    public var clientName: String
    /// One session (connect, greet, send, quit) must finish within this.
    public var timeout: Duration

    public init(
        host: String, port: Int, security: Security = .startTLS, username: String? = nil, password: String? = nil,
        trustRootsFile: String? = nil, clientName: String = "localhost", timeout: Duration = .seconds(60)
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.trustRootsFile = trustRootsFile
        self.clientName = clientName
        self.timeout = timeout
    }
}
