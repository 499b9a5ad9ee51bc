import HearthDomain
import HearthHTTP
import HearthStore
import Logging

/// At start, the providers whose client secret is a file someone other than the operator named.
/// Since issue 28 only the operator's credential (or the config file) may name one; a ledger
/// from before recorded every admin as `admin:owner`, so a reference a project's admin planted
/// then (pointing at the admin token, another project's secret) would still be read and sent.
/// Each such provider is logged at every start until it is set again.
enum SecretFileAudit {
    static func check(
        _ store: AccountStore, declared: [ProjectSettings.DeclaredProject], operators: Set<String>, logger: Logger
    ) throws {
        for project in try store.read({ try $0.configuredProjects() }) {
            let config = try store.read { try $0.config(of: project) }
            let files = config.identityProviders.filter { if case .file = $0.clientSecret { true } else { false } }
            guard !files.isEmpty else { continue }
            let fromFile = declared.first { $0.project == project }?.identityProviders ?? []
            let events = try store.audit.events(of: .project(project))
            for provider in files {
                guard case .file(let path) = provider.clientSecret,
                    !fromFile.contains(where: { $0.providerId == provider.providerId && $0.clientSecret == provider.clientSecret })
                else { continue }
                guard let setter = lastSetter(of: provider.providerId, in: events), setter.actor == .admin,
                    !operators.contains(setter.actorId ?? "")
                else { continue }
                logger.warning(
                    "a provider's client secret is a file an admin other than the operator named: check it, and set the secret again (clientSecret) if it is not the provider's",
                    metadata: [
                        "project": "\(project)", "provider": "\(provider.providerId)", "file": "\(path)",
                        "setBy": "admin:\(setter.actorId ?? "?")",
                    ])
            }
        }
    }

    /// Who recorded the provider's configuration last.
    private static func lastSetter(of providerId: ProviderID, in events: [StoredEvent]) -> Metadata? {
        for event in events.reversed() {
            if case .identityProviderSet(let set) = event.payload, set.providerId == providerId { return event.metadata }
        }
        return nil
    }
}
