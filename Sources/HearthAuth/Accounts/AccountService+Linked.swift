import HearthDomain
import HearthStore

extension AccountService {
    /// Accounts linked to `providerId` (the development fake IdP page lists them to reuse).
    public func accounts(linkedTo providerId: ProviderID, _ caller: Caller, limit: Int = 100) throws -> [Account] {
        try read { try $0.accounts(linkedTo: providerId, in: caller.project, limit: limit) }
    }
}
