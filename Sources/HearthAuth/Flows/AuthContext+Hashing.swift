import HearthDomain
import HearthStore

/// Password hashing in the caller's turn: each client address has its own queue in the pool, and
/// one with its share already waiting is refused (counted by the abuse limits) instead of
/// delaying everyone else.
extension AuthContext {
    public func hash(_ password: String, for caller: Caller) async throws -> PasswordHash {
        try await inTurn(caller) { [passwords] client in try await passwords.hash(password, client: client) }
    }

    /// A password a user chose, held to the project's policy (`passwordPolicyConfig`).
    func checkPasswordPolicy(_ password: String, _ caller: Caller) throws {
        let unmet = try read { try $0.config(of: caller.project) }.passwordPolicy.unmet(by: password)
        guard unmet.isEmpty else { throw FirebaseError.passwordRequirementsUnmet(unmet) }
    }

    /// A hash this build cannot check counts as a wrong password, never as a server error.
    func matches(_ password: String, _ stored: PasswordHash, for caller: Caller) async throws -> Bool {
        do {
            return try await inTurn(caller) { [passwords] client in
                try await passwords.verify(password, against: stored, client: client)
            }
        } catch is PasswordHashError {
            return false
        }
    }

    private func inTurn<T>(_ caller: Caller, _ body: (String?) async throws -> T) async throws -> T {
        do {
            return try await body(AbuseGuard.addressKey(caller))
        } catch is PasswordHasher.ClientShareFull {
            throw limits?.hashQueueFull(caller)
                ?? FirebaseError.bad("TOO_MANY_ATTEMPTS_TRY_LATER : too many password checks are waiting; try again later")
        }
    }
}
