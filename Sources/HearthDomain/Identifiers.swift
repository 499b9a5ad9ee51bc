/// An identifier that is a validated string: printed, compared and coded as that string.
public protocol StringIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    var rawValue: String { get }
    init?(_ rawValue: String)
}

extension StringIdentifier {
    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        guard let id = Self(raw) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "invalid \(Self.self) '\(raw)'"))
        }
        self = id
    }
}

/// A Firebase project id ("demo-hearth"). Every account, index and setting is scoped by it.
public struct ProjectID: StringIdentifier {
    public let rawValue: String

    /// Project ids are 1-63 characters of lowercase letters, digits, '-' and '_' (no '/').
    public init?(_ rawValue: String) {
        guard (1...63).contains(rawValue.utf8.count),
            rawValue.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x5f })
        else { return nil }
        self.rawValue = rawValue
    }
}

/// A user id (Firebase `localId`): 1-128 characters, no control characters, and at most 384
/// bytes of UTF-8, so that every key built from it stays under LMDB's 511-byte limit.
public struct UserID: StringIdentifier {
    public let rawValue: String

    public init?(_ rawValue: String) {
        let utf8 = rawValue.utf8
        guard !utf8.isEmpty, utf8.count <= 384,
            utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7f }),
            utf8.count <= 128 || rawValue.count <= 128,
            rawValue.unicodeScalars.allSatisfy({ !(0x80...0x9f).contains($0.value) })
        else { return nil }
        self.rawValue = rawValue
    }
}

/// Which stream an event belongs to. Streams are the unit of ordering and of expected-version
/// checks: one per account, one per project (its configuration), one per out-of-band code, and
/// the cluster's own, which belong to no project.
public enum StreamID: Hashable, Sendable, CustomStringConvertible {
    case account(ProjectID, UserID)
    case project(ProjectID)
    /// An email action code, named by the SHA-256 (hex) of the code; the code itself is never stored.
    case oobCode(ProjectID, String)
    /// The ledger's own history, beside every project's (a single node is a cluster of one).
    case cluster(ClusterStream)

    /// The project the stream belongs to; none for the cluster's streams.
    public var project: ProjectID? {
        switch self {
        case .account(let project, _), .project(let project), .oobCode(let project, _): project
        case .cluster: nil
        }
    }

    /// "account/demo-hearth/<uid>", "project/demo-hearth", "oob/demo-hearth/<sha256>", "cluster/terms".
    public var description: String {
        switch self {
        case .account(let project, let uid): "account/\(project)/\(uid)"
        case .project(let project): "project/\(project)"
        case .oobCode(let project, let hash): "oob/\(project)/\(hash)"
        case .cluster(let stream): "cluster/\(stream.rawValue)"
        }
    }

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        if parts[0] == "cluster" {
            guard parts.count == 2, let stream = ClusterStream(rawValue: String(parts[1])) else { return nil }
            self = .cluster(stream)
            return
        }
        guard let project = ProjectID(String(parts[1])) else { return nil }
        switch (parts[0], parts.count) {
        case ("project", 2): self = .project(project)
        case ("account", 3):
            guard let uid = UserID(String(parts[2])) else { return nil }
            self = .account(project, uid)
        case ("oob", 3): self = .oobCode(project, String(parts[2]))
        default: return nil
        }
    }
}

/// The cluster's streams.
public enum ClusterStream: String, Hashable, Sendable, CaseIterable {
    /// Which node led each term, and the head it started from (`cluster.term_started`).
    case terms
    /// The signing keys' rotations (`SigningKeyRing`).
    case signingKeys = "signing-keys"
}
