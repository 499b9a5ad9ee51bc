import HearthDomain
import HearthStore

/// Project settings and the development outbox.
extension AuthService {
    public func config(_ caller: Caller) throws -> ProjectConfig {
        try read { try $0.config(of: caller.project) }
    }

    public func changeConfig(_ change: ProjectConfigChange, _ caller: Caller) async throws {
        try await write(caller) { tx in try tx.execute(.changeProjectConfig(caller.project, change)) }
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
