import HearthDomain
import HearthStore

/// `createAuthUri`: which sign-in methods an email has.
extension SignInService {
    public struct SignInMethods: Sendable, Equatable {
        public var registered: Bool
        /// Provider ids (`password` covers both password and email link).
        public var allProviders: [ProviderID]
        /// `password`, `emailLink` and federated provider ids.
        public var signInMethods: [SignInMethod]
    }

    /// `nil` under email enumeration protection: then nobody learns whether an address is registered.
    public func signInMethods(for email: String, _ caller: Caller) throws -> SignInMethods? {
        let project = caller.project
        let (found, config) = try read { reader in
            (
                try reader.owner(ofEmail: normalizeEmail(email), in: project).flatMap { try reader.account($0, in: project) },
                try reader.config(of: project)
            )
        }
        if config.improvedEmailPrivacy { return nil }
        guard let account = found else { return SignInMethods(registered: false, allProviders: [], signInMethods: []) }
        let federated = account.providers.map(\.providerId)
        let usesPassword = account.password != nil || account.emailLinkSignIn
        return SignInMethods(
            registered: true, allProviders: (usesPassword ? [.password] : []) + federated,
            signInMethods: account.signInMethods)
    }
}
