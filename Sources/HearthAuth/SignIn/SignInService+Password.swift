import HearthDomain
import HearthStore

/// `accounts:signInWithPassword` (verifyPassword).
extension SignInService {
    public func signInWithPassword(email: String?, password: String?, _ caller: Caller) async throws -> SignInResult {
        let project = caller.project
        // Email/Password off: Firebase's answer before any other, whatever the address (the
        // writer's `decide` refuses the sign-in too).
        // One read of the project's settings serves the whole sign-in.
        let config = try read { try $0.config(of: project) }
        guard config.emailPasswordEnabled else {
            throw FirebaseError(AuthError.passwordLoginDisabled)
        }
        // Absent is MISSING_EMAIL; an empty string is not an email.
        if email == "" { throw FirebaseError.invalidEmail }
        let email = try Validation.email(email)
        guard let password, !password.isEmpty else { throw FirebaseError.missingPassword }
        // Reserved before any hashing, under the limits' lock, so concurrent guesses are held to
        // the same allowance as sequential ones; settled once the answer is known.
        let attempt = try limits?.reservePasswordAttempt(email: email, caller, now: now)
        let privacy = config.improvedEmailPrivacy
        let (account, stored): (Account, PasswordHash)
        do {
            (account, stored) = try await checkPassword(password, of: email, privacy: privacy, caller)
        } catch let wrong as WrongPassword {
            limits?.passwordFailed(attempt, now: now)
            throw wrong.answer
        } catch {
            limits?.release(attempt, now: now)  // no password was checked
            throw error
        }
        limits?.passwordSucceeded(attempt, now: now)
        // `forceUpgradeOnSignin`: a right password the policy now refuses must be changed first
        // (by a reset, which the policy holds to it).
        let policy = config.passwordPolicy
        if policy.forceUpgradeOnSignIn, case let unmet = policy.unmet(by: password), !unmet.isEmpty {
            throw FirebaseError.passwordRequirementsUnmet(unmet)
        }
        // An imported or older hash is replaced by one with today's parameters (an event).
        let rehashed = passwords.isOutdated(stored) ? try await hash(password, for: caller) : nil
        let uid = account.uid
        let session = try await write(caller, uid: uid) { tx in
            // The password checked above must still be the account's.
            guard try tx.account(uid, project).password == stored else {
                throw privacy ? FirebaseError.invalidLoginCredentials : FirebaseError.invalidPassword
            }
            let rehash = rehashed.map { Command.setPassword(project, uid, $0, email: nil, reason: .rehashed) }
            return try context.record(.existingAccount(project, uid, method: .password, after: rehash.map { [$0] } ?? []), in: tx)
        }
        return try await issueTokens(for: session, caller)
    }

    /// A failed check, with its answer: a wrong password, an unknown address or an account
    /// without a password.
    private struct WrongPassword: Error {
        var answer: FirebaseError
    }

    /// The account with `email` and its stored hash, if `password` is its password; throws
    /// `WrongPassword` if not, and anything else when no check was made (a disabled account, a
    /// full hashing queue). Email enumeration protection: one answer, and the time of one
    /// password check, whether the address is unknown, has no password or was given a wrong one.
    private func checkPassword(_ password: String, of email: String, privacy: Bool, _ caller: Caller) async throws
        -> (Account, PasswordHash)
    {
        let project = caller.project
        let found = try read { reader in try reader.owner(ofEmail: email, in: project).flatMap { try reader.account($0, in: project) } }
        guard let account = found else {
            if privacy { _ = try await hash(password, for: caller) }
            throw WrongPassword(answer: privacy ? FirebaseError.invalidLoginCredentials : FirebaseError.emailNotFound)
        }
        guard !account.disabled else { throw FirebaseError.userDisabled }
        guard let stored = account.password else {
            if privacy { _ = try await hash(password, for: caller) }
            throw WrongPassword(answer: privacy ? FirebaseError.invalidLoginCredentials : FirebaseError.invalidPassword)
        }
        guard try await matches(password, stored, for: caller) else {
            throw WrongPassword(answer: privacy ? FirebaseError.invalidLoginCredentials : FirebaseError.invalidPassword)
        }
        return (account, stored)
    }
}
