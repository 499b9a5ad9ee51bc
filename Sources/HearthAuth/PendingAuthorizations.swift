import Crypto
import Foundation
import HearthCrypto
import HearthDomain
import HearthWire
import Synchronization

/// Headful sign-ins between `/__/auth/handler`'s start and the app's `signInWithIdp`: kept in
/// memory under a random `state` (unguessable, so it can not be forged), for ten minutes, used
/// once. A restart forgets them; the user starts the sign-in again.
///
/// An unauthenticated caller can start them, so they are bounded, and a flood evicts only its
/// own kind: at most `perProject` for one project (its oldest go first), at most `capacity` in
/// all (then the oldest of the project holding the most goes, so a project with fewer pending
/// sign-ins than the flooding one keeps them). Client addresses are held back before this, by
/// the abuse limits (`headfulSignInsPerAddressPerHour`). Every operation is O(1).
public final class PendingAuthorizations: Sendable {
    public struct Entry: Sendable {
        /// What the SDK opened the handler with.
        public var request: HeadfulRequest
        public var project: ProjectID
        /// PKCE's verifier and OpenID Connect's nonce, kept for the code exchange.
        public var codeVerifier: String
        public var nonce: String
        public var createdAt: Int64
    }

    public static let lifetime: Int64 = 10 * 60 * 1000
    let capacity: Int
    let perProject: Int
    private let store = Mutex(Store())

    /// By default 10,000 in all and half of that for one project.
    public init(capacity: Int = 10_000, perProject: Int? = nil) {
        self.capacity = max(1, capacity)
        self.perProject = max(1, min(perProject ?? capacity / 2, capacity))
    }

    /// A new, unguessable state.
    public static func newState() -> String {
        SecureRandom.string(43, from: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8))
    }

    /// Records `entry` under `state`, making room as the bounds say.
    public func insert(_ entry: Entry, state: String) {
        store.withLock { store in
            store.remove(state)
            store.expire(now: entry.createdAt)
            if let oldest = store.byProject[entry.project]?.oldest, store.byProject[entry.project]!.count >= perProject {
                store.remove(oldest)
            }
            if store.entries.count >= capacity, let oldest = store.oldestOfLargestProject { store.remove(oldest) }
            store.add(entry, state: state)
        }
    }

    /// The entry, if `state` is one and it has not expired; it stays for `take`.
    public func peek(_ state: String, now: Int64) -> Entry? {
        store.withLock { store in
            store.entries[state].flatMap { now - $0.createdAt < Self.lifetime ? $0 : nil }
        }
    }

    /// The entry, removed: a state is good for one sign-in.
    public func take(_ state: String, now: Int64) -> Entry? {
        store.withLock { store in
            guard let entry = store.remove(state) else { return nil }
            return now - entry.createdAt < Self.lifetime ? entry : nil
        }
    }

    /// Pending sign-ins held, in all and for `project`.
    public func count(project: ProjectID? = nil) -> Int {
        store.withLock { store in project.map { store.byProject[$0]?.count ?? 0 } ?? store.entries.count }
    }

    /// Lowercase hex SHA-256, as the iOS SDK hashes its session id.
    public static func sessionHash(_ sessionId: String) -> String {
        sha256Hex(sessionId)
    }

    /// PKCE S256: the base64url SHA-256 of the verifier.
    public static func codeChallenge(_ verifier: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8))))
    }

    /// The entries, in insertion order in all and per project, and the projects by how many
    /// entries they hold (so the largest is found without a scan).
    private struct Store {
        var entries: [String: Entry] = [:]
        var all = KeyQueue()
        var byProject: [ProjectID: KeyQueue] = [:]
        var projectsHolding: [Int: Set<ProjectID>] = [:]
        var most = 0

        mutating func add(_ entry: Entry, state: String) {
            entries[state] = entry
            all.append(state)
            let held = byProject[entry.project]?.count ?? 0
            byProject[entry.project, default: KeyQueue()].append(state)
            move(entry.project, from: held, to: held + 1)
        }

        @discardableResult
        mutating func remove(_ state: String) -> Entry? {
            guard let entry = entries.removeValue(forKey: state) else { return nil }
            all.remove(state)
            let held = byProject[entry.project]?.count ?? 0
            byProject[entry.project]?.remove(state)
            if held <= 1 { byProject[entry.project] = nil }
            move(entry.project, from: held, to: held - 1)
            return entry
        }

        /// Entries are inserted oldest first, so the expired ones are at the front.
        mutating func expire(now: Int64) {
            while let oldest = all.oldest, let entry = entries[oldest], now - entry.createdAt >= PendingAuthorizations.lifetime {
                remove(oldest)
            }
        }

        var oldestOfLargestProject: String? {
            projectsHolding[most]?.first.flatMap { byProject[$0]?.oldest }
        }

        /// A project's count changes by one: so does `most`, at most.
        private mutating func move(_ project: ProjectID, from old: Int, to new: Int) {
            if old > 0 {
                projectsHolding[old]?.remove(project)
                if projectsHolding[old]?.isEmpty == true { projectsHolding[old] = nil }
            }
            if new > 0 { projectsHolding[new, default: []].insert(project) }
            if new > most { most = new }
            if old == most && projectsHolding[old] == nil { most = new }
        }
    }
}

/// Keys in insertion order as a doubly linked list threaded through a dictionary: append,
/// remove any key and read the oldest, each O(1).
struct KeyQueue {
    private var links: [String: (older: String?, newer: String?)] = [:]
    private(set) var oldest: String?
    private var newest: String?

    var count: Int { links.count }

    mutating func append(_ key: String) {
        guard links[key] == nil else { return }
        links[key] = (newest, nil)
        if let newest { links[newest]?.newer = key } else { oldest = key }
        newest = key
    }

    mutating func remove(_ key: String) {
        guard let link = links.removeValue(forKey: key) else { return }
        if let older = link.older { links[older]?.newer = link.newer } else { oldest = link.newer }
        if let newer = link.newer { links[newer]?.older = link.older } else { newest = link.older }
    }
}

/// What an SDK opens `/__/auth/handler` with.
public struct HeadfulRequest: Sendable {
    public var apiKey: String
    public var providerId: ProviderID
    /// Lowercase hex SHA-256 of the SDK's session id; the raw id comes with `signInWithIdp`.
    public var sessionHash: String
    public var eventId: String
    public var authType: String
    /// The query parameters that say where the app waits (`ibi`, `clientId`, `appId`, `apn`).
    public var app: [String: String]
    public var redirectURI: String
    public var scopes: [String]
    public var customParameters: [String: String]
    public var language: String?

    public init(
        apiKey: String, providerId: ProviderID, sessionHash: String, eventId: String, authType: String,
        app: [String: String], redirectURI: String, scopes: [String], customParameters: [String: String],
        language: String?
    ) {
        self.apiKey = apiKey
        self.providerId = providerId
        self.sessionHash = sessionHash
        self.eventId = eventId
        self.authType = authType
        self.app = app
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.customParameters = customParameters
        self.language = language
    }
}
