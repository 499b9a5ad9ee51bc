import HearthDomain
import HearthStore

/// Admin `create_user`.
extension AccountService {
    /// What an administrator may set when creating a user (Admin SDK `create_user`).
    public struct NewUser: Sendable {
        public var uid: UserID?
        public var email: String?
        public var password: String?
        public var displayName: String?
        public var photoUrl: String?
        public var phoneNumber: String?
        public var emailVerified = false
        public var disabled = false

        public init() {}
    }

    public func createUser(_ user: NewUser, _ caller: Caller) async throws -> Account {
        let email = try user.email.map { try Validation.email($0) }
        let password = try user.password.map { try Validation.password($0) }
        let phone = try user.phoneNumber.map(Validation.phoneNumber)
        let hash = if let password { try await hash(password, for: caller) } else { PasswordHash?.none }
        let project = caller.project
        return try await write(caller) { tx in
            let uid = user.uid ?? tx.newUserID()
            let created = AccountCreated(
                method: .admin, createdAt: tx.now, email: email, emailVerified: user.emailVerified, password: hash,
                displayName: user.displayName, photoUrl: user.photoUrl, phoneNumber: phone, disabled: user.disabled)
            try tx.execute(.createAccount(project, uid, created))
            return try tx.account(uid, project)
        }
    }
}
