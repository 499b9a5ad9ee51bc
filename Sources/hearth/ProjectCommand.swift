import ArgumentParser
import Foundation
import HearthApp
import HearthDomain
import HearthHTTP
import HearthStore
import HearthTools
import HearthWire

/// `hearth project show|set|history`: a project's settings in Identity Platform's `Config` JSON.
struct Project: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show, change or trace a project's settings (sign-in methods, authorized domains, anonymous cleanup).",
        subcommands: [Show.self, Set.self, History.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the project's settings as GET /v2/projects/{p}/config does (reads the data directory; safe beside the daemon).")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption

        func run() throws {
            let store = try data.directory.openForReading()
            defer { store.close() }
            let config = try store.read { try $0.config(of: project.project) }
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
                signIn.anonymous.enabled, signIn.allowDuplicateEmails, authorizedDomains (comma-separated), \
                autodeleteAnonymousUsers, emailPrivacyConfig.enableImprovedEmailPrivacy, anonymousCleanupAfterSeconds \
                (tests and staging only). An empty value resets a field to its default. The daemon's address and an \
                admin token come from the config file serve uses (--config or $HEARTH_CONFIG), unless given.
                """)

        @Option(help: "A JSON configuration file, the one hearth serve uses (default: $HEARTH_CONFIG).")
        var config: String?
        @Option(help: "The daemon's host:port (default: the config file's host and port, or 127.0.0.1:9099).")
        var daemon: String?
        @Option(help: "An admin token (default: $HEARTH_ADMIN_TOKEN, the config file's first, or development's owner).")
        var token: String?
        @OptionGroup var project: Audit.ProjectOption
        @Argument(help: "path=value settings.") var assignments: [String]

        func run() throws {
            let serverConfiguration = try ServerConfiguration.load(
                file: config ?? environmentValue("HEARTH_CONFIG"), environment: ProcessInfo.processInfo.environment)
            var host = serverConfiguration.host
            var port = serverConfiguration.port
            if let daemon {
                let parts = daemon.split(separator: ":")
                guard parts.count == 2, let parsed = Int(parts[1]) else { throw ValidationError("--daemon takes host:port") }
                (host, port) = (String(parts[0]), parsed)
            }
            if host == "0.0.0.0" { host = "127.0.0.1" } else if host == "::" { host = "::1" }
            let bearer =
                token ?? environmentValue("HEARTH_ADMIN_TOKEN") ?? serverConfiguration.allAdminTokens.first?.token
                ?? (serverConfiguration.profile == .development ? "owner" : nil)
            let (body, mask) = try ProjectAssignments.update(assignments)
            let client = DaemonClient(host: host, port: port, bearer: bearer)
            let reply = try client.send(
                "PATCH", "/identitytoolkit.googleapis.com/v2/projects/\(project.project.rawValue)/config?updateMask=\(mask)",
                json: body.encoded())
            let answer = JSONValue.parse(reply.body) ?? .null
            guard reply.status == 200 else {
                throw ValidationError("the daemon refused (\(reply.status)): \(answer["error"]?["message"]?.stringValue ?? answer.text)")
            }
            let out = Output.standardOutput
            out.line(answer.text)
            out.flush()
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every recorded change of the project's settings: when, by whom, what (reads the data directory).")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption
        @Option(help: "json (one object per line) or text.") var format: AuditTool.Format = .text

        func run() throws {
            let store = try data.directory.openForReading()
            defer { store.close() }
            let out = Output.standardOutput
            for event in try store.audit.events(of: .project(project.project)) {
                out.line(format == .json ? try event.jsonLine() : AuditTool.text(event))
            }
            out.flush()
        }
    }
}
