import HearthDomain
import HearthStore

/// Email links an app opens itself (the iOS or Android app a link's action code settings name)
/// are served on the project's link domains: which project a link domain belongs to, for its
/// association files and its link page.
extension ProjectService {
    /// The settings of the one project whose `linkDomains` include `host` (a bare, lowercased
    /// host name). `nil` when no project lists it, or when several do: a domain associates one
    /// project's apps, never a union another tenant could slip an app into.
    ///
    /// The work is one read of each configured project's settings: projects exist only as an
    /// operator or administrator configures them, never by an anonymous request.
    public func linkDomainOwner(_ host: String) throws -> ProjectConfig? {
        try read { reader in
            var found: ProjectConfig?
            for project in try reader.configuredProjects() {
                guard let config = try reader.recordedConfig(of: project), config.servesLinks(on: host) else { continue }
                guard found == nil else { return nil }
                found = config
            }
            return found
        }
    }
}
