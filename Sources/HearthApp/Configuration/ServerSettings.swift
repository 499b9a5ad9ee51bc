import Foundation
import HearthAuth
import HearthStore
import HearthWire

/// `hearth serve`'s settings as the operator wrote them, in sections: defaults (the development
/// profile), then a JSON file, then `HEARTH_*` environment variables, then command-line flags.
/// `validated()` checks them once and builds what the daemon runs on (`ServerConfiguration`).
public struct ServerSettings: Sendable, Equatable {
    public var profile = Profile.development
    public var dataDirectory = DataDirectory.defaultPath
    public var listen = ListenSettings()
    public var limits = LimitsSettings()
    public var passwords = PasswordSettings()
    public var secrets = SecretSettings()
    public var projects = ProjectSettings()
    public var providers = ProviderSettings()
    public var mail = MailSettings()
    public var cleanup = CleanupSettings()
    public var observability = ObservabilitySettings()
    public var cluster = ClusterSettings()

    public init() {}

    /// Defaults, then `file` (if given), then `environment`, then the command line's `flags`.
    public static func load(
        file: String?, environment: [String: String], flags: (inout ServerSettings) -> Void = { _ in }
    ) throws -> ServerSettings {
        var settings = ServerSettings()
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError.unreadable(file) }
            guard let object = JSONValue.parse([UInt8](data))?.objectValue else { throw ConfigurationError.notJSONObject(file) }
            if let unknown = object.keys.sorted().first(where: { SettingsTable.byKey[$0] == nil }) {
                throw ConfigurationError.unknownKey(unknown, in: file)
            }
            // In the table's order, not the dictionary's (which changes from run to run).
            for setting in SettingsTable.settings {
                if let value = object[setting.key] { try setting.read(&settings, value, file) }
            }
        }
        for setting in SettingsTable.settings {
            guard let text = environment[setting.environmentName], !text.isEmpty else { continue }
            try setting.read(&settings, setting.value(fromEnvironment: text), setting.environmentName)
        }
        flags(&settings)
        return settings
    }

    /// Every rule checked once, and the values the daemon runs on.
    public func validated() throws -> ServerConfiguration {
        ServerConfiguration(
            profile: profile, dataDirectory: dataDirectory, listen: try listen.validated(profile),
            limits: try limits.validated(profile), passwords: try passwords.validated(), secrets: try secrets.validated(profile),
            projects: try projects.validated(profile), providers: try providers.validated(profile),
            mail: try mail.validated(profile), cleanup: try cleanup.validated(), observability: observability,
            cluster: try cluster.validated())
    }
}
