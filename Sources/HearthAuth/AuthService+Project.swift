import HearthDomain
import HearthStore

/// Project settings and the development outbox.
extension AuthService {
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
        return try await write(caller) { tx in
            let current = try tx.config(of: project)
            try tx.execute(.changeProjectConfig(project, current.change(to: try update(current))))
            return try tx.config(of: project)
        }
    }

    /// Sent codes not yet used, oldest first (`GET /emulator/v1/projects/{p}/oobCodes`).
    public func pendingActionLinks(_ caller: Caller) throws -> [ActionLink] {
        let links = outbox?.links(of: caller.project) ?? []
        return try read { reader in
            try links.filter { link in
                guard let code = try reader.oobCode(Self.codeHash(link.oobCode), in: caller.project) else { return false }
                return !code.consumed
            }
        }
    }
}

/// Anonymous cleanup, as an administrator sees it.
extension AuthService {
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
