import HearthDomain
import HearthStore

/// Identity providers' configurations (admin): read, create, change, delete.
extension ProjectService {
    public func identityProviders(_ caller: Caller) throws -> [IdentityProviderConfig] {
        try config(caller).identityProviders
    }

    public func identityProvider(_ providerId: ProviderID, _ caller: Caller) throws -> IdentityProviderConfig {
        guard let provider = try config(caller).identityProvider(providerId) else {
            throw FirebaseError(AuthError.configurationNotFound)
        }
        return provider
    }

    /// Records what `update` makes of the provider's configuration (`nil` when it has none),
    /// read in the same transaction; `creating` refuses one that exists, otherwise one that
    /// does not. Returns the configuration recorded.
    public func setIdentityProvider(
        _ providerId: ProviderID, creating: Bool, _ caller: Caller,
        _ update: @escaping @Sendable (IdentityProviderConfig?) throws -> IdentityProviderConfig
    ) async throws -> IdentityProviderConfig {
        let project = caller.project
        return try await write(caller) { tx in
            let current = try tx.config(of: project).identityProvider(providerId)
            if creating && current != nil { throw AuthError.configurationExists }
            if !creating && current == nil { throw AuthError.configurationNotFound }
            let provider = try update(current)
            try tx.execute(.setIdentityProvider(project, provider, creating: creating))
            return provider
        }
    }

    public func deleteIdentityProvider(_ providerId: ProviderID, _ caller: Caller) async throws {
        try await write(caller) { tx in try tx.execute(.deleteIdentityProvider(caller.project, providerId)) }
    }
}
