import HearthDomain
import HearthWire
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The abuse limits at work: checked before the work they protect (a password hash, a commit, an
/// email), counted per project and client address (IPv6 by its /64, what one subscriber holds)
/// or per account. Every refusal is counted by limit and reported to `onRefusal` (the daemon
/// logs it). A limited client gets Firebase's errors: `TOO_MANY_ATTEMPTS_TRY_LATER`, or
/// `QUOTA_EXCEEDED` for one recipient's emails.
public final class AbuseGuard: Sendable {
    public enum Limit: String, Sendable, CaseIterable {
        case signUpsPerAddress, passwordFailuresPerAccount, passwordFailuresPerAddress
        case emailsPerRecipient, emailsPerAddress, hashQueuePerAddress
        case headfulSignInsPerAddress
    }

    public struct Refusal: Sendable {
        public var limit: Limit
        public var project: ProjectID
        /// The client address (its /64 for IPv6), when the limit is per address.
        public var address: String?
        /// Milliseconds until the client may try again.
        public var retryAfter: Int64?
    }

    public let policy: AbuseLimitPolicy
    private let onRefusal: @Sendable (Refusal) -> Void
    private let signUps = LimitTable<TokenBucket>()
    private let accountFailures = LimitTable<Backoff>()
    private let addressFailures = LimitTable<Backoff>()
    private let recipientEmails = LimitTable<TokenBucket>()
    private let addressEmails = LimitTable<TokenBucket>()
    private let headfulStarts = LimitTable<TokenBucket>()
    private let counts = Mutex<[Limit: Int]>([:])

    public init(policy: AbuseLimitPolicy, onRefusal: @escaping @Sendable (Refusal) -> Void = { _ in }) {
        self.policy = policy
        self.onRefusal = onRefusal
    }

    /// Refusals so far, by limit.
    public var refusals: [Limit: Int] { counts.withLock { $0 } }

    static let hour: Int64 = 3_600_000

    func admitSignUp(_ caller: Caller, now: Int64) throws {
        guard !caller.isAdmin, let address = Self.addressKey(caller) else { return }
        let limits = policy.limits(for: caller.project)
        if let wait = signUps.update(
            key(caller.project, address), now: now, { $0.take(capacity: limits.signUpsPerAddressPerHour, period: Self.hour, now: now) })
        {
            throw refuse(.signUpsPerAddress, caller, address: address, retryAfter: wait)
        }
    }

    /// Before `/__/auth/handler` records a pending sign-in for the client.
    func admitHeadfulStart(_ caller: Caller, now: Int64) throws {
        guard !caller.isAdmin, let address = Self.addressKey(caller) else { return }
        let limits = policy.limits(for: caller.project)
        if let wait = headfulStarts.update(
            key(caller.project, address), now: now,
            { $0.take(capacity: limits.headfulSignInsPerAddressPerHour, period: Self.hour, now: now) })
        {
            throw refuse(.headfulSignInsPerAddress, caller, address: address, retryAfter: wait)
        }
    }

    /// A password check admitted under the limits: reserved against the account's and the
    /// address's allowance before any hashing, and settled by `passwordFailed`,
    /// `passwordSucceeded` or (the check never ran) `release`, exactly once.
    public struct PasswordAttempt: Sendable {
        let accountKey: String
        let addressKey: String?
        let project: ProjectID
    }

    /// Before a password is checked: refused while the account, or the client address, waits
    /// out a backoff or has its allowance taken by checks under way. Only password sign-in is
    /// held back: a reset or an email link still works, so a guesser can not lock the owner out.
    /// `nil` for an admin, whom no limit holds.
    func reservePasswordAttempt(email: String, _ caller: Caller, now: Int64) throws -> PasswordAttempt? {
        guard !caller.isAdmin else { return nil }
        let limits = policy.limits(for: caller.project)
        // The address first: a client it holds back touches no account's entry.
        var addressKey: String?
        if let address = Self.addressKey(caller) {
            let key = key(caller.project, address)
            if let wait = addressFailures.update(key, now: now, { $0.reserve(free: limits.passwordFailuresPerAddress, now: now) }) {
                throw refuse(.passwordFailuresPerAddress, caller, address: address, retryAfter: wait)
            }
            addressKey = key
        }
        let accountKey = key(caller.project, email)
        if let wait = accountFailures.update(accountKey, now: now, { $0.reserve(free: limits.passwordFailuresPerAccount, now: now) }) {
            if let addressKey { settle(addressFailures, addressKey, failed: false, caller.project, now: now) }
            throw refuse(.passwordFailuresPerAccount, caller, address: nil, retryAfter: wait)
        }
        return PasswordAttempt(accountKey: accountKey, addressKey: addressKey, project: caller.project)
    }

    /// Before a second factor's code is checked: codes share the password limits (a guess is a
    /// guess), counted for the account by its uid and for the client address.
    func reserveSecondFactorAttempt(uid: UserID, _ caller: Caller, now: Int64) throws -> PasswordAttempt? {
        try reservePasswordAttempt(email: "second-factor:" + uid.rawValue, caller, now: now)
    }

    func passwordFailed(_ attempt: PasswordAttempt?, now: Int64) {
        guard let attempt else { return }
        settle(accountFailures, attempt.accountKey, failed: true, attempt.project, now: now)
        if let addressKey = attempt.addressKey { settle(addressFailures, addressKey, failed: true, attempt.project, now: now) }
    }

    /// The owner proved the password: the account's count starts over. (An address's does not:
    /// a guesser could sign in to an account of their own between guesses.)
    func passwordSucceeded(_ attempt: PasswordAttempt?, now: Int64) {
        guard let attempt else { return }
        accountFailures.remove(attempt.accountKey)
        if let addressKey = attempt.addressKey { settle(addressFailures, addressKey, failed: false, attempt.project, now: now) }
    }

    /// The check was never made (the account is disabled, the hashing queue was full, …).
    func release(_ attempt: PasswordAttempt?, now: Int64) {
        guard let attempt else { return }
        settle(accountFailures, attempt.accountKey, failed: false, attempt.project, now: now)
        if let addressKey = attempt.addressKey { settle(addressFailures, addressKey, failed: false, attempt.project, now: now) }
    }

    /// A password reset by email: the owner set a new password, so the account's count starts over.
    func passwordProven(email: String, project: ProjectID) {
        accountFailures.remove(key(project, email))
    }

    private func settle(_ table: LimitTable<Backoff>, _ key: String, failed: Bool, _ project: ProjectID, now: Int64) {
        let limits = policy.limits(for: project)
        let free = table === accountFailures ? limits.passwordFailuresPerAccount : limits.passwordFailuresPerAddress
        table.update(key, now: now) {
            $0.settle(failed: failed, free: free, maxDelay: Int64(limits.passwordBackoffMaxSeconds) * 1000, now: now)
        }
    }

    /// Before an action-code email is sent.
    func admitEmail(to recipient: String, _ caller: Caller, now: Int64) throws {
        guard !caller.isAdmin else { return }
        let limits = policy.limits(for: caller.project)
        if let address = Self.addressKey(caller),
            let wait = addressEmails.update(
                key(caller.project, address), now: now, { $0.take(capacity: limits.emailsPerAddressPerHour, period: Self.hour, now: now) })
        {
            throw refuse(.emailsPerAddress, caller, address: address, retryAfter: wait)
        }
        if let wait = recipientEmails.update(
            key(caller.project, recipient), now: now, { $0.take(capacity: limits.emailsPerRecipientPerHour, period: Self.hour, now: now) })
        {
            throw refuse(.emailsPerRecipient, caller, address: nil, retryAfter: wait)
        }
    }

    /// The hashing pool refused a client with too many jobs waiting.
    func hashQueueFull(_ caller: Caller) -> FirebaseError {
        refuse(.hashQueuePerAddress, caller, address: Self.addressKey(caller), retryAfter: nil)
    }

    /// The client's queue in the hashing pool: its address, so each address waits behind itself.
    /// An IPv6 client counts by its /64 (what one subscriber is usually given); an IPv4 client
    /// seen through a dual-stack socket (`::ffff:a.b.c.d`) by its IPv4 address.
    static func addressKey(_ caller: Caller) -> String? {
        guard let ip = caller.clientIp, !ip.isEmpty else { return nil }
        return IPAddress(ip)?.unmapped.subscriberKey ?? ip
    }

    private func key(_ project: ProjectID, _ subject: String) -> String {
        project.rawValue + "\u{0}" + subject
    }

    private func refuse(_ limit: Limit, _ caller: Caller, address: String?, retryAfter: Int64?) -> FirebaseError {
        counts.withLock { $0[limit, default: 0] += 1 }
        onRefusal(Refusal(limit: limit, project: caller.project, address: address, retryAfter: retryAfter))
        switch limit {
        case .emailsPerRecipient:
            return FirebaseError.bad("QUOTA_EXCEEDED : too many emails to this address; try again later")
        default:
            return FirebaseError.bad("TOO_MANY_ATTEMPTS_TRY_LATER : too many attempts; try again later")
        }
    }
}
