import HearthDomain
import Synchronization

/// ID tokens whose signature and claims were checked, by their exact text. A client presents
/// the same token for up to an hour, so the public-key check and the JSON decode happen once
/// per token instead of once per request. Expiry is still checked on every use, and account
/// state (revoked, disabled, deleted) is checked by the caller, never cached.
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        var project: ProjectID
        var expiresAt: Int64
        /// The keyring's withdrawals when it was checked (`SigningKeyring.withdrawals`): once a
        /// key is withdrawn, every token is checked again (one atomic load on a hit, no lock).
        var withdrawals: UInt64
        var token: TokenIssuer.VerifiedIDToken
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Bounds memory (an entry is about 2 KB): a full cache is emptied and refills with the
    /// tokens in use, which costs one verification each.
    let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    func entry(for token: String) -> Entry? {
        entries.withLock { $0[token] }
    }

    func insert(_ entry: Entry, for token: String) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = entry
        }
    }
}
