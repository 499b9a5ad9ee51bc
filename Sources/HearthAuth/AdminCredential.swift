import Crypto
import Foundation
import HearthDomain

/// A bearer token that grants admin access, to every project or to the ones it names (one
/// deployment serving several projects gives each operator a token of its own).
public struct AdminCredential: Sendable, Equatable {
    public enum Scope: Sendable, Equatable {
        case everyProject
        case projects(Set<ProjectID>)

        package func covers(_ project: ProjectID) -> Bool {
            switch self {
            case .everyProject: true
            case .projects(let projects): projects.contains(project)
            }
        }

        /// The project a call that names none acts on, when the token allows just one.
        package var onlyProject: ProjectID? {
            guard case .projects(let projects) = self, projects.count == 1 else { return nil }
            return projects.first
        }

        /// The same token listed twice grants what either entry grants.
        package mutating func widen(by other: Scope) {
            switch (self, other) {
            case (.projects(let mine), .projects(let theirs)): self = .projects(mine.union(theirs))
            default: self = .everyProject
            }
        }
    }

    public var token: String
    public var scope: Scope
    /// What events record as the actor (`admin:<name>`), so `hearth project history` tells which
    /// tenant changed what; unset, `token-` and the first 8 hex digits of the token's SHA-256.
    public var name: String?

    public init(token: String, scope: Scope = .everyProject, name: String? = nil) {
        self.token = token
        self.scope = scope
        self.name = name
    }

    /// The name events record: the configured one, else one derived from the token that tells
    /// tokens apart without revealing anything an attacker could use (32 bits of a hash of a
    /// random token of at least 32 characters).
    public var recordedName: String {
        if let name { return name }
        let digest = SHA256.hash(data: Array(token.utf8))
        return "token-" + digest.prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// A name an operator may give a token: 1 to 64 of letters, digits and `._-`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2E || byte == 0x5F
                    || byte == 0x2D
            }
    }

    /// The shortest token accepted: 32 characters, e.g. `openssl rand -base64 32` gives 44.
    public static let minimumLength = 32
    /// Fewer distinct characters than this is no random token ("aaaa…", "0123012301230123…").
    public static let minimumDistinctCharacters = 8
    /// Tokens that are published, so never secret: the emulator's, the docs' examples and the
    /// usual placeholders (compared case-insensitively).
    public static let knownDefaults: Set<String> = [
        "owner", "admin", "root", "secret", "password", "changeme", "token", "test", "default", "hearth", "firebase",
        "replace-with-a-long-random-token-from-openssl-rand",
    ]

    /// Why this token is refused, or `nil` when it may guard the admin API.
    public var weakness: String? {
        if Self.knownDefaults.contains(token.lowercased()) { return "a published default" }
        if token.count < Self.minimumLength { return "shorter than \(Self.minimumLength) characters" }
        if token.contains(where: \.isWhitespace) { return "contains white space" }
        if Set(token).count < Self.minimumDistinctCharacters {
            return "fewer than \(Self.minimumDistinctCharacters) distinct characters"
        }
        return nil
    }
}
