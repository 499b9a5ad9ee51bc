import ArgumentParser
import Foundation
import HearthAPIJSON
import HearthApp
import HearthAuth
import HearthDomain
import HearthStore
import HearthTools
import HearthWire

/// `hearth project show|set|history`: a project's settings in Identity Platform's `Config` JSON.
struct Project: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show, change or trace a project's settings (sign-in methods, authorized domains, anonymous cleanup).",
        subcommands: [Show.self, Set.self, History.self, Providers.self, Provider.self])

    /// The project's settings as the data directory holds them (a read beside the daemon).
    static func storedConfig(_ data: DataOptions, _ project: ProjectID) throws -> ProjectConfig {
        return try data.directory.reading { store in
            return try store.read { try $0.config(of: project) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the project's settings as GET /v2/projects/{p}/config does (reads the data directory; safe beside the daemon)."
        )

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption

        func run() throws {
            let config = try Project.storedConfig(data, project.project)
            let out = Output.standardOutput
            out.line(ProjectConfigJSON.render(config, project: project.project).text)
            out.flush()
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change settings through the running daemon (its API and writer), e.g. autodeleteAnonymousUsers=true.",
            discussion: """
                Each argument is a Config field path and a value: signIn.email.enabled, signIn.email.passwordRequired, \
                signIn.anonymous.enabled, signIn.allowDuplicateEmails, authorizedDomains and linkDomains (comma-separated), \
                autodeleteAnonymousUsers, emailPrivacyConfig.enableImprovedEmailPrivacy, anonymousCleanupAfterSeconds \
                (tests and staging only). An empty value resets a field to its default. The daemon's address and an \
                admin token come from the config file serve uses (--config or $HEARTH_CONFIG), unless given.
                """)

        @OptionGroup var daemon: DaemonOptions
        @OptionGroup var project: Audit.ProjectOption
        @Argument(help: "path=value settings.") var assignments: [String]

        func run() throws {
            let (body, mask) = try ProjectAssignments.update(assignments)
            let path = "/identitytoolkit.googleapis.com/v2/projects/\(project.project.rawValue)/config?updateMask=\(mask)"
            try daemon.print(try daemon.call("PATCH", path, body))
        }
    }

    struct Providers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The project's identity providers, as the v2 API shows them, never their secrets (reads the data directory).")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption

        func run() throws {
            let providers = try Project.storedConfig(data, project.project).identityProviders
            let out = Output.standardOutput
            for provider in providers { out.line(IdentityProviderJSON.render(provider, project: project.project).text) }
            out.flush()
        }
    }

    struct Provider: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or change (set) or delete an identity provider through the running daemon.",
            discussion: """
                set PROVIDER path=value...: enabled, clientId, clientSecretFile (a file the daemon reads, e.g. a systemd \
                credential; clientSecret also works but shows in the process list), and for oidc.* providers issuer, \
                displayName, responseType.code, responseType.idToken. A provider that does not exist yet is created.
                """)

        enum Action: String, ExpressibleByArgument {
            case set, delete
        }

        @OptionGroup var daemon: DaemonOptions
        @OptionGroup var project: Audit.ProjectOption
        @Argument(help: "set or delete.") var action: Action
        @Argument(help: "The provider id: github.com, yahoo.com, google.com, facebook.com, apple.com, oidc.<name>.")
        var provider: String
        @Argument(help: "path=value settings (set).") var assignments: [String] = []

        func run() throws {
            let collection = provider.hasPrefix("oidc.") ? "oauthIdpConfigs" : "defaultSupportedIdpConfigs"
            let base = "/identitytoolkit.googleapis.com/v2/projects/\(project.project.rawValue)/\(collection)"
            let item = base + "/" + FormEncoding.percentEncoded(provider)
            if action == .delete {
                _ = try daemon.call("DELETE", item, nil)
                return
            }
            let (body, mask) = try ProjectAssignments.update(assignments)
            do {
                try daemon.print(try daemon.call("PATCH", item + "?updateMask=" + mask, body))
            } catch let refusal as DaemonClient.Refusal where refusal.code == "CONFIGURATION_NOT_FOUND" {
                let query = provider.hasPrefix("oidc.") ? "oauthIdpConfigId" : "idpId"
                try daemon.print(try daemon.call("POST", base + "?\(query)=" + FormEncoding.percentEncoded(provider), body))
            }
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every recorded change of the project's settings: when, by whom, what (reads the data directory).")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption
        @Option(help: "json (one object per line) or text.") var format: AuditTool.Format = .text

        func run() throws {
            try data.directory.reading { store in
                let out = Output.standardOutput
                for event in try store.audit.events(of: .project(project.project)) {
                    out.line(format == .json ? try event.jsonLine() : AuditTool.text(event))
                }
                out.flush()
            }
        }
    }
}

/// How a tool reaches the daemon beside it: the address and an admin token, from the config
/// file `serve` uses unless given.
struct DaemonOptions: ParsableArguments {
    @Option(help: "A JSON configuration file, the one hearth serve uses (default: $HEARTH_CONFIG).")
    var config: String?
    @Option(help: "The daemon's host:port (default: the config file's host and port, or 127.0.0.1:9099).")
    var daemon: String?
    @Option(help: "An admin token (default: $HEARTH_ADMIN_TOKEN, the config file's first, or development's owner).")
    var token: String?

    func client() throws -> DaemonClient {
        let configuration = try ServerConfiguration.load(
            file: config ?? environmentValue("HEARTH_CONFIG"), environment: ProcessInfo.processInfo.environment)
        var host = configuration.listen.host
        var port = configuration.listen.port
        if let daemon {
            let parts = daemon.split(separator: ":")
            guard parts.count == 2, let parsed = Int(parts[1]) else { throw ValidationError("--daemon takes host:port") }
            (host, port) = (String(parts[0]), parsed)
        }
        if host == "0.0.0.0" { host = "127.0.0.1" } else if host == "::" { host = "::1" }
        let bearer =
            token ?? environmentValue("HEARTH_ADMIN_TOKEN") ?? configuration.secrets.adminCredentials.first?.token
            ?? (configuration.profile == .development ? "owner" : nil)
        return DaemonClient(host: host, port: port, bearer: bearer)
    }

    /// One admin call; its JSON answer, or the refusal.
    func call(_ method: String, _ path: String, _ body: JSONValue?) throws -> JSONValue {
        try client().call(method, path, body)
    }

    func print(_ answer: JSONValue) throws {
        let out = Output.standardOutput
        out.line(answer.text)
        out.flush()
    }
}
