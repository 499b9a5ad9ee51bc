import ArgumentParser
import Foundation
import HearthApp
import HearthTools

/// `hearth settings`: every setting `serve` reads, or the settings in force after the file and
/// the environment (secrets never shown).
struct Settings: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every setting serve reads (key, environment variable, default), or check a configuration.",
        discussion: """
            Without --check: the reference, in Markdown (docs/configuration.md is this output). With --check: load \
            the file and the environment as serve would, validate them, and exit 1 with the reason if serve would refuse \
            to start.
            """)

    @Flag(help: "Validate the configuration serve would run on, instead of listing the settings.")
    var check = false

    @Option(help: "A JSON configuration file (default: $HEARTH_CONFIG).")
    var config: String?

    func run() throws {
        let out = Output.standardOutput
        defer { out.flush() }
        guard check else {
            out.write(SettingsTable.markdown())
            return
        }
        do {
            let valid = try ServerConfiguration.load(
                file: config ?? environmentValue("HEARTH_CONFIG"), environment: ProcessInfo.processInfo.environment)
            out.line(
                "configuration valid: \(valid.profile) profile on \(valid.listen.host):\(valid.listen.port), "
                    + "data in \(valid.dataDirectory), \(valid.projects.declared.count) declared project(s)")
        } catch let error as ConfigurationError {
            let err = Output.standardError
            err.line("configuration invalid: \(error)")
            err.flush()
            throw ExitCode(1)
        }
    }
}
