import HearthDomain
import HearthStore

/// `accounts:batchCreate` (Admin `import_users`, `auth:import`).
extension AccountService {
    /// Imports in one transaction (each account an `account.created` of method `import`); each
    /// refused user fails alone. Returns (index, message) of each failure, in the Admin SDK's terms.
    /// `overwrite` (`allowOverwrite`): an existing account with the uid is replaced whole.
    public func importUsers(_ users: [(UserID, AccountCreated)], overwrite: Bool = false, _ caller: Caller) async throws
        -> [(index: Int, message: String)]
    {
        let commands = users.map { uid, created in
            overwrite ? Command.replaceAccount(caller.project, uid, created) : Command.createAccount(caller.project, uid, created)
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
                // Anything else is a rule of ours (its message) or a fault, not spelled out to a client.
                default: (error as? FirebaseError)?.message ?? "the account could not be imported"
                }
            return (index, message)
        }
    }
}
