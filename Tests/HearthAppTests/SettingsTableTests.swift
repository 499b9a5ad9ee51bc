import Foundation
import HearthApp
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import Logging
import Testing

/// The one table of settings: every row reaches its section from the file and from the
/// environment, names are unique, and the reference in docs/ is the table's own output.
@Suite("configuration: the settings table")
struct SettingsTableTests {
    /// A value for every setting, as an environment variable would carry it. A setting added to
    /// the table without one here fails `everySettingHasASample`.
    static let samples: [String: String] = [
        "profile": "production", "dataDirectory": "/var/lib/hearth", "host": "127.0.0.2", "port": "9300",
        "insecureDevelopmentOnNetwork": "true", "insecurePlainHttpOnNetwork": "yes", "publicUrl": "https://auth.example.com/",
        "trustedProxies": "127.0.0.1, 10.0.0.0/8", "developmentBrowserAdmin": "1", "disableConsole": "1", "idleTimeoutSeconds": "61",
        "requestTimeoutSeconds": "11", "requestMinBytesPerSecond": "2048", "requestTimeoutMaxSeconds": "62",
        "maxConnections": "500", "maxConnectionsPerAddress": "32", "maxBufferedRequestBytes": "8388608",
        "requestHeadTimeoutSeconds": "5", "limits": #"{"signUpsPerAddressPerHour": 7}"#, "scryptLogN": "12",
        "scryptBlockSize": "4", "scryptParallelization": "2", "hashThreads": "3",
        "adminTokens": "J8v2Qk4m7Xz1Lp0sRt6Yw9Nc3Hb5Gd8F", "adminTokenFile": "<file>", "customTokenKeys": "/etc/hearth/backend.pem",
        "signingAlgorithm": "es256", "project": "other-project", "apiKeys": #"{"key-a": "project-a"}"#,
        "projects": #"{"project-a": {"autodeleteAnonymousUsers": true}}"#, "recentSignInSeconds": "120",
        "identityProviders": #"{"github.com": {"webUrl": "https://github.example"}}"#, "providerTimeoutSeconds": "5",
        "providerAllowedNetworks": "10.1.2.3/32", "providerAllowedHosts": "*.example.com", "secretFilesDirectory": "/run/secrets",
        "actionUrl": "https://app.example.com/action", "actionCodeLifetimeSeconds": "3600", "appName": "Example",
        "mailFrom": "auth@example.com", "mailFromName": "Example Auth", "smtpHost": "mail.example.com", "smtpPort": "2525",
        "smtpSecurity": "TLS", "smtpUsername": "relay", "smtpPassword": "relay-secret", "smtpPasswordFile": "<file>",
        "smtpTrustRoots": "/etc/ssl/relay.pem", "cleanupBatchSize": "256", "logFormat": "json", "logLevel": "debug",
        "logClientAddresses": "full",
        "cluster":
            #"{"name": "auth", "node": "n1", "etcd": ["http://10.0.0.5:2379"], "advertiseUrl": "http://10.0.0.2:9099", "replicationTokenFile": "<file>"}"#,
    ]

    @Test("keys and environment variables are unique, and every setting has a sample here")
    func everySettingHasASample() {
        let keys = SettingsTable.settings.map(\.key)
        let names = SettingsTable.settings.map(\.environmentName)
        #expect(Set(keys).count == keys.count)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0.hasPrefix("HEARTH_") })
        #expect(Set(keys) == Set(Self.samples.keys))
        #expect(SettingsTable.settings.first { $0.key == "dataDirectory" }?.environmentName == "HEARTH_DATA_DIR")
        #expect(SettingsTable.settings.first { $0.key == "smtpTrustRoots" }?.environmentName == "HEARTH_SMTP_TRUST_ROOTS")
    }

    @Test("every setting, alone in the environment or in a file, changes the settings")
    func everyRowReachesItsField() throws {
        let directory = TemporaryDirectory("settings-table")
        let secretFile = directory.path + "/secret"
        try "K3x9Wq2Lm8Zp4Rt7Yv1Bn6Hc5Jd0Gf2S\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        for setting in SettingsTable.settings {
            let sample = Self.samples[setting.key]!.replacingOccurrences(of: "<file>", with: secretFile)
            let fromEnvironment = try ServerSettings.load(file: nil, environment: [setting.environmentName: sample])
            #expect(fromEnvironment != ServerSettings(), "\(setting.environmentName)")

            let file = directory.path + "/\(setting.key).json"
            let value: String =
                switch setting.kind {
                case .json: sample
                case .list:
                    "[" + sample.split(separator: ",").map { "\"\($0.trimmingCharacters(in: .whitespaces))\"" }.joined(separator: ",") + "]"
                case .flag: "true"
                case .integer: sample
                case .text: "\"\(sample)\""
                }
            try "{\"\(setting.key)\": \(value)}".write(toFile: file, atomically: true, encoding: .utf8)
            let fromFile = try ServerSettings.load(file: file, environment: [:])
            #expect(fromFile == fromEnvironment, "\(setting.key)")
        }
    }

    @Test("the environment's values land in the sections' fields and are built once, by validation")
    func sectionsAreBuilt() throws {
        let environment = [
            "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": #"{"key-a": "project-a"}"#,
            "HEARTH_PUBLIC_URL": "https://auth.example.com/", "HEARTH_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8",
            "HEARTH_LIMITS": #"{"signUpsPerAddressPerHour": 7}"#, "HEARTH_SCRYPT_LOG_N": "12", "HEARTH_CLEANUP_BATCH_SIZE": "256",
            "HEARTH_LOG_FORMAT": "json", "HEARTH_LOG_LEVEL": "debug", "HEARTH_RECENT_SIGN_IN_SECONDS": "120",
            "HEARTH_LOG_CLIENT_ADDRESSES": "full",
            "HEARTH_ACTION_CODE_LIFETIME_SECONDS": "3600",
        ]
        let settings = try ServerSettings.load(file: nil, environment: environment)
        #expect(settings.listen.publicUrl == "https://auth.example.com/")
        #expect(settings.passwords.scryptLogN == 12 && settings.cleanup.batchSize == 256)
        let valid = try settings.validated()
        #expect(valid.profile == .production)
        #expect(valid.listen.publicURL == "https://auth.example.com")
        #expect(valid.listen.trustedProxies.count == 2)
        #expect(valid.projects.apiKeys.mapValues(\.rawValue) == ["key-a": "project-a"])
        #expect(valid.projects.declared.map(\.project.rawValue) == ["demo-hearth", "project-a"])
        #expect(valid.projects.recentSignIn?.window == 120)
        #expect(valid.limits.abuse?.defaults.signUpsPerAddressPerHour == 7)
        #expect(valid.passwords.parameters.logN == 12)
        #expect(valid.cleanup.batchSize == 256)
        #expect(valid.observability.logFormat == .json && valid.observability.logLevel == .debug)
        #expect(valid.observability.logClientAddresses == .full)
        #expect(valid.mail.actionCodeLifetimes.values.allSatisfy { $0 == 3_600_000 })
        // Development: no limits, no recent-login rule, unsigned custom tokens.
        let development = try ServerSettings().validated()
        #expect(development.limits.abuse == nil && development.projects.recentSignIn == nil)
        #expect(development.secrets.customTokens.acceptsUnsigned)
    }

    @Test("values of the wrong type or out of range name their setting")
    func refusals() {
        for (name, value, setting) in [
            ("HEARTH_CLEANUP_BATCH_SIZE", "0", "cleanupBatchSize"), ("HEARTH_LOG_LEVEL", "loud", "logLevel"),
            ("HEARTH_LOG_FORMAT", "xml", "logFormat"), ("HEARTH_PORT", "ninety", "port"),
            ("HEARTH_DEVELOPMENT_BROWSER_ADMIN", "maybe", "developmentBrowserAdmin"),
        ] {
            #expect("\(name)") {
                try ServerConfiguration.load(file: nil, environment: [name: value])
            } throws: { error in
                guard case ConfigurationError.invalid(let key, _) = error else { return false }
                return key == setting
            }
        }
    }

    @Test("docs/configuration.md's table is the table's own output (scripts/settings-doc regenerates it)")
    func referenceIsGenerated() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let begin = "<!-- settings:begin -->\n"
        let inside = try #require(doc.components(separatedBy: begin).last?.components(separatedBy: "<!-- settings:end -->").first)
        #expect(inside == SettingsTable.markdown(), "run scripts/settings-doc")
    }
}
