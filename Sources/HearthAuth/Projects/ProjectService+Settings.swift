import HearthDomain
import HearthStore

/// Project settings.
extension ProjectService {
    public func config(_ caller: Caller) throws -> ProjectConfig {
        try read { try $0.config(of: caller.project) }
    }

    /// Whether `host` is one of `project`'s authorized domains (production's CORS rule).
    public func authorizes(host: String, in project: ProjectID) throws -> Bool {
        try read { try $0.config(of: project) }.authorizes(host: host)
    }

    /// Reads the settings and records what `update` makes of them, in one transaction (two
    /// concurrent updates of different fields both land); returns the settings after.
    public func updateConfig(
        _ caller: Caller, _ update: @escaping @Sendable (ProjectConfig) throws -> ProjectConfig
    ) async throws -> ProjectConfig {
        let project = caller.project
        try refuseClaimedLinkDomains(try update(config(caller)), of: project)
        return try await write(caller) { tx in
            let current = try tx.config(of: project)
            try tx.execute(.changeProjectConfig(project, current.change(to: try update(current))))
            return try tx.config(of: project)
        }
    }

    /// A link domain associates one project's apps: a project may not list a domain another
    /// already does (a tenant would otherwise take, or break, another's universal links). Checked
    /// before the write; two projects claiming a domain at the same instant both lose it, as the
    /// association files then serve neither.
    private func refuseClaimedLinkDomains(_ next: ProjectConfig, of project: ProjectID) throws {
        guard !next.linkDomains.isEmpty else { return }
        if let own = next.linkDomains.first(where: { settings.serverHosts.contains($0.lowercased()) }) {
            throw FirebaseError(AuthError.invalidProjectConfig("linkDomains: \(own) is this server's own host (publicUrl)"))
        }
        let taken = try read { reader -> String? in
            for other in try reader.configuredProjects() where other != project {
                guard let config = try reader.recordedConfig(of: other) else { continue }
                if let domain = next.linkDomains.first(where: config.servesLinks(on:)) { return domain }
            }
            return nil
        }
        if let taken {
            throw FirebaseError(AuthError.invalidProjectConfig("linkDomains: \(taken) is another project's link domain"))
        }
    }

}

/// Anonymous cleanup, as an administrator sees it.
extension ProjectService {
    /// Counts the whole schedule: off the event loops.
    public func cleanupStatus(_ caller: Caller) async throws -> CleanupStatus {
        let (now, project) = (self.now, caller.project)
        return try await store.scan { try $0.cleanupStatus(of: project, now: now) }
    }

    public func cleanupPreview(_ caller: Caller) async throws -> CleanupPreview {
        let (now, project) = (self.now, caller.project)
        return try await store.scan { try $0.cleanupPreview(of: project, now: now) }
    }
}

/// The settings' history, for the console (`hearth project history` reads the same stream).
extension ProjectService {
    /// Every recorded change of the project's settings, oldest first: few, one per change.
    public func settingsHistory(_ caller: Caller) throws -> [LedgerEntry] {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return try store.audit.events(of: .project(caller.project)).map(LedgerEntry.init)
    }
}
