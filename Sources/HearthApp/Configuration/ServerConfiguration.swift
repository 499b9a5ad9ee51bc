import HearthAuth
import HearthCluster

/// What `hearth serve` runs on: every section of `ServerSettings`, validated and built.
public struct ServerConfiguration: Sendable {
    public let profile: Profile
    public let dataDirectory: String
    public let listen: ListenSettings.Valid
    public let limits: LimitsSettings.Valid
    public let passwords: PasswordSettings.Valid
    public let secrets: SecretSettings.Valid
    public let projects: ProjectSettings.Valid
    public let providers: ProviderSettings.Valid
    public let mail: MailSettings.Valid
    public let cleanup: CleanupSettings.Valid
    public let observability: ObservabilitySettings
    /// This node's cluster, or `nil`: a single node.
    public let cluster: ClusterConfiguration?

    /// Defaults, then `file`, then `environment`, then `flags`; validated as a whole.
    public static func load(
        file: String?, environment: [String: String], flags: (inout ServerSettings) -> Void = { _ in }
    ) throws -> ServerConfiguration {
        try ServerSettings.load(file: file, environment: environment, flags: flags).validated()
    }

}
