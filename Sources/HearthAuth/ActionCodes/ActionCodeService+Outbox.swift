import HearthDomain
import HearthStore

/// The development outbox.
extension ActionCodeService {
    /// Sent codes not yet used, oldest first (`GET /emulator/v1/projects/{p}/oobCodes`).
    public func pendingActionLinks(_ caller: Caller) throws -> [ActionLink] {
        let links = outbox?.links(of: caller.project) ?? []
        return try read { reader in
            try links.filter { link in
                guard let code = try reader.oobCode(AuthContext.codeHash(link.oobCode), in: caller.project) else { return false }
                return !code.consumed
            }
        }
    }
}
