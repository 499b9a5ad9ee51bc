import Crypto
import Foundation
import HearthDomain
import HearthWire
import Synchronization

/// Headful sign-ins between `/__/auth/handler`'s start and the app's `signInWithIdp`: kept in
/// memory under a random `state` (unguessable, so it can not be forged), for ten minutes, used
/// once, at most `capacity` at a time (the oldest go first: an unauthenticated caller can fill
/// it, not grow it). A restart forgets them; the user starts the sign-in again.
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
    private let entries = Mutex<(byState: [String: Entry], order: [String])>(([:], []))

    public init(capacity: Int = 10_000) { self.capacity = capacity }

    /// A new, unguessable state.
    public static func newState() -> String {
        SecureRandom.string(43, from: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8))
    }

    /// Records `entry` under `state`.
    public func insert(_ entry: Entry, state: String) {
        entries.withLock { entries in
            let now = entry.createdAt
            entries.order.removeAll { key in
                guard let old = entries.byState[key], now - old.createdAt < Self.lifetime else {
                    entries.byState[key] = nil
                    return true
                }
                return false
            }
            while entries.order.count >= capacity, let oldest = entries.order.first {
                entries.order.removeFirst()
                entries.byState[oldest] = nil
            }
            entries.byState[state] = entry
            entries.order.append(state)
        }
    }

    /// The entry, if `state` is one and it has not expired; it stays for `take`.
    public func peek(_ state: String, now: Int64) -> Entry? {
        entries.withLock { entries in
            entries.byState[state].flatMap { now - $0.createdAt < Self.lifetime ? $0 : nil }
        }
    }

    /// The entry, removed: a state is good for one sign-in.
    public func take(_ state: String, now: Int64) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries.byState.removeValue(forKey: state) else { return nil }
            entries.order.removeAll { $0 == state }
            return now - entry.createdAt < Self.lifetime ? entry : nil
        }
    }

    /// Lowercase hex SHA-256, as the iOS SDK hashes its session id.
    public static func sessionHash(_ sessionId: String) -> String {
        sha256Hex(sessionId)
    }

    /// PKCE S256: the base64url SHA-256 of the verifier.
    public static func codeChallenge(_ verifier: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8))))
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
