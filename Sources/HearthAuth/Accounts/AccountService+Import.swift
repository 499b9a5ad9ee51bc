import HearthDomain
import HearthStore

/// `accounts:batchCreate` (Admin `import_users`, `auth:import`).
extension AccountService {
    /// One user of an import: the account, and the second factors it keeps.
    public struct ImportedUser: Sendable {
        public var uid: UserID
        public var account: AccountCreated
        public var secondFactors: [SecondFactor]

        public init(uid: UserID, account: AccountCreated, secondFactors: [SecondFactor] = []) {
            self.uid = uid
            self.account = account
            self.secondFactors = secondFactors
        }
    }

    /// Imports in one transaction (each account an `account.created` of method `import`, then
    /// an `account.mfa_enrolled` per factor); each refused user fails alone. Returns (index,
    /// message) of each failure, in the Admin SDK's terms. `overwrite` (`allowOverwrite`): an
    /// existing account with the uid is replaced whole.
    public func importUsers(_ users: [ImportedUser], overwrite: Bool = false, _ caller: Caller) async throws
        -> [(index: Int, message: String)]
    {
        let commands = users.map { user in
            Command.importAccount(caller.project, user.uid, user.account, secondFactors: user.secondFactors, overwrite: overwrite)
        }
        let results = try await inFirebaseTerms { try await store.executeAll(commands, metadata: AuthContext.metadata(caller)) }
        return results.enumerated().compactMap { index, result in
            guard case .failure(let error) = result else { return nil }
            let message =
                switch error as? AuthError {
                case .uidExists?: "localId belongs to an existing account - can not overwrite."
                case .emailExists?: "email exists in other account in database"
                case .federatedUserIdAlreadyLinked?: "raw id exists in other account in database"
                case .phoneNumberExists?: "phone number exists in other account in database"
                case .secondFactorLimitExceeded?: "mfaInfo has more than \(SecondFactorRules.maxFactorsPerAccount) second factors"
                case .duplicateEnrollmentId?: "mfaInfo names an mfaEnrollmentId twice"
                // Anything else is a rule of ours (its message) or a fault, not spelled out to a client.
                default: (error as? FirebaseError)?.message ?? "the account could not be imported"
                }
            return (index, message)
        }
    }
}
