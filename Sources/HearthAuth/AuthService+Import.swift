import HearthDomain
import HearthLedger
import HearthProjections
import HearthStore

/// `accounts:batchCreate` (Admin `import_users`, `auth:import`).
extension AuthService {
    /// One imported user; validated by the HTTP layer's parser.
    public struct ImportedUser: Sendable {
        public var uid: UserID
        public var email: String?
        public var emailVerified = false
        public var password: PasswordHash?
        public var displayName: String?
        public var photoUrl: String?
        public var phoneNumber: String?
        public var providers: [ProviderLink] = []
        public var customClaims: String?
        public var disabled = false
        public var createdAt: Int64?
        public var lastSignInAt: Int64?

        public init(uid: UserID) { self.uid = uid }
    }

    /// Imports in one transaction; each refused user fails alone. Returns (index, message) of
    /// each failure, in the Admin SDK's terms.
    public func importUsers(_ users: [ImportedUser], _ caller: Caller) async throws -> [(index: Int, message: String)] {
        let project = caller.project
        let now = self.now
        let commands = users.map { user in
            Command.createAccount(
                project, user.uid,
                AccountCreated(
                    method: .import, createdAt: user.createdAt ?? now, email: user.email, emailVerified: user.emailVerified,
                    password: user.password, displayName: user.displayName, photoUrl: user.photoUrl,
                    phoneNumber: user.phoneNumber, providers: user.providers, customClaims: user.customClaims,
                    disabled: user.disabled, lastSignInAt: user.lastSignInAt))
        }
        let results = try await store.executeAll(commands, metadata: metadata(caller))
        return results.enumerated().compactMap { index, result in
            guard case .failure(let error) = result else { return nil }
            let message =
                switch error as? AuthError {
                case .uidExists?: "localId belongs to an existing account - can not overwrite."
                case .emailExists?: "email exists in other account in database"
                case .federatedUserIdAlreadyLinked?: "raw id exists in other account in database"
                case .phoneNumberExists?: "phone number exists in other account in database"
                default: "\(error)"
                }
            return (index, message)
        }
    }
}
