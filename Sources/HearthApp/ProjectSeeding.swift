import HearthAPIJSON
import HearthDomain
import HearthStore
import HearthWire
import Logging

/// The config file's `projects` section: a project's settings are recorded from it at the first
/// start that finds none in the ledger (one `project.config_changed` by the `system` actor
/// "config file"). After that the ledger wins: its settings changed only through recorded,
/// attributed events (the API, `hearth project set`), and a restart must not silently undo an
/// operator's change, nor make the settings history say what was not so. Where the file and the
/// ledger disagree, the start logs which fields differ.
enum ProjectSeeding {
    static let metadata = Metadata(actor: .system, actorId: "config file")
    static let defaultsMetadata = Metadata(actor: .system, actorId: "production defaults")

    static func seed(_ declared: [ProjectSettings.DeclaredProject], into store: AccountStore, logger: Logger) async throws {
        for declaration in declared {
            let project = declaration.project
            let recorded = try store.read { try $0.recordedConfig(of: project) }
            if let recorded {
                guard declaration.inFile else { continue }
                let differing = differingFields(recorded, declaration.settings, project)
                if !differing.isEmpty {
                    logger.notice(
                        "the config file's settings differ from the ledger's; the ledger's apply (change them with hearth project set)",
                        metadata: ["project": "\(project)", "fields": "\(differing.joined(separator: ","))"])
                }
            } else {
                try await store.execute(
                    .changeProjectConfig(project, ProjectConfig().change(to: declaration.settings)),
                    metadata: declaration.inFile ? metadata : defaultsMetadata)
                logger.info(
                    declaration.inFile
                        ? "project settings recorded from the config file" : "project settings recorded: the production defaults",
                    metadata: ["project": "\(project)"])
            }
            // Each provider likewise: recorded once, from then on the ledger's.
            for provider in declaration.identityProviders {
                if let existing = recorded?.identityProvider(provider.providerId) {
                    if existing != provider {
                        logger.notice(
                            "the config file's identity provider differs from the ledger's; the ledger's applies",
                            metadata: ["project": "\(project)", "provider": "\(provider.providerId)"])
                    }
                } else {
                    try await store.execute(.setIdentityProvider(project, provider, creating: true), metadata: metadata)
                    logger.info(
                        "identity provider recorded from the config file",
                        metadata: ["project": "\(project)", "provider": "\(provider.providerId)"])
                }
            }
        }
    }

    /// Dotted `Config` paths whose values differ.
    static func differingFields(_ recorded: ProjectConfig, _ declared: ProjectConfig, _ project: ProjectID) -> [String] {
        var left: [String: String] = [:]
        var right: [String: String] = [:]
        flatten(ProjectConfigJSON.render(recorded, project: project), "", into: &left)
        flatten(ProjectConfigJSON.render(declared, project: project), "", into: &right)
        return left.keys.filter { left[$0] != right[$0] }.sorted()
    }

    private static func flatten(_ value: JSONValue, _ path: String, into leaves: inout [String: String]) {
        if let object = value.objectValue {
            for (name, inner) in object { flatten(inner, path.isEmpty ? name : path + "." + name, into: &leaves) }
        } else {
            leaves[path] = value.text
        }
    }
}
