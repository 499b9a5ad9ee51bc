#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthDomain
import HearthWire
import Synchronization

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
        if let wait = signUps.update(key(caller.project, address), now: now, { $0.take(capacity: limits.signUpsPerAddressPerHour, period: Self.hour, now: now) }) {
            throw refuse(.signUpsPerAddress, caller, address: address, retryAfter: wait)
        }
    }

    /// Before `/__/auth/handler` records a pending sign-in for the client.
    func admitHeadfulStart(_ caller: Caller, now: Int64) throws {
        guard !caller.isAdmin, let address = Self.addressKey(caller) else { return }
        let limits = policy.limits(for: caller.project)
        if let wait = headfulStarts.update(key(caller.project, address), now: now, { $0.take(capacity: limits.headfulSignInsPerAddressPerHour, period: Self.hour, now: now) }) {
            throw refuse(.headfulSignInsPerAddress, caller, address: address, retryAfter: wait)
        }
    }

    /// Before a password is checked: refused while the account, or the client address, waits
    /// out a backoff. Only password sign-in is held back: a reset or an email link still works,
    /// so a guesser can not lock the owner out.
    func admitPasswordAttempt(email: String, _ caller: Caller, now: Int64) throws {
        guard !caller.isAdmin else { return }
        if let wait = accountFailures.peek(key(caller.project, email))?.waiting(now: now) {
            throw refuse(.passwordFailuresPerAccount, caller, address: nil, retryAfter: wait)
        }
        if let address = Self.addressKey(caller), let wait = addressFailures.peek(key(caller.project, address))?.waiting(now: now) {
            throw refuse(.passwordFailuresPerAddress, caller, address: address, retryAfter: wait)
        }
    }

    func passwordFailed(email: String, _ caller: Caller, now: Int64) {
        guard !caller.isAdmin else { return }
        let limits = policy.limits(for: caller.project)
        let maxDelay = Int64(limits.passwordBackoffMaxSeconds) * 1000
        accountFailures.update(key(caller.project, email), now: now) {
            $0.fail(free: limits.passwordFailuresPerAccount, maxDelay: maxDelay, now: now)
        }
        if let address = Self.addressKey(caller) {
            addressFailures.update(key(caller.project, address), now: now) {
                $0.fail(free: limits.passwordFailuresPerAddress, maxDelay: maxDelay, now: now)
            }
        }
    }

    /// The owner proved the password, or set a new one by a reset: the account's count starts
    /// over. (An address's does not: a guesser could sign in to an account of their own between
    /// guesses.)
    func passwordProven(email: String, project: ProjectID) {
        accountFailures.remove(key(project, email))
    }

    /// Before an action-code email is sent.
    func admitEmail(to recipient: String, _ caller: Caller, now: Int64) throws {
        guard !caller.isAdmin else { return }
        let limits = policy.limits(for: caller.project)
        if let address = Self.addressKey(caller),
            let wait = addressEmails.update(key(caller.project, address), now: now, { $0.take(capacity: limits.emailsPerAddressPerHour, period: Self.hour, now: now) })
        {
            throw refuse(.emailsPerAddress, caller, address: address, retryAfter: wait)
        }
        if let wait = recipientEmails.update(key(caller.project, recipient), now: now, { $0.take(capacity: limits.emailsPerRecipientPerHour, period: Self.hour, now: now) }) {
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
