import Foundation
import HearthAuth
import HearthDomain
import HearthWire

/// Who is admin, which keys may sign custom tokens, and how Hearth signs ID tokens.
public struct SecretSettings: Sendable, Equatable {
    /// Bearer tokens accepted as admin, each for every project or the ones it names
    /// (production needs at least one for the admin API).
    public var adminTokens: [AdminCredential] = []
    /// Those read from `adminTokenFile`, for every project (kept apart, so that setting one
    /// source never drops the other's).
    public var adminTokenFileTokens: [AdminCredential] = []
    /// PEM files of the public keys that may sign custom tokens.
    public var customTokenKeys: [String] = []
    public var signingAlgorithm = SigningKey.Algorithm.rs256

    public init() {}

    public struct Valid: Sendable {
        public let adminCredentials: [AdminCredential]
        public let customTokens: CustomTokenVerifier
        public let signingAlgorithm: SigningKey.Algorithm
    }

    func validated(_ profile: Profile) throws -> Valid {
        let credentials = adminTokens + adminTokenFileTokens
        if let weakness = credentials.lazy.compactMap(\.weakness).first {
            throw ConfigurationError.weakAdminToken(weakness)
        }
        let keys = try customTokenKeys.map { path in
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigurationError.unreadable(path) }
            do {
                return try VerificationKey(pem: pem)
            } catch {
                throw ConfigurationError.invalid("customTokenKeys", source: path)
            }
        }
        return Valid(
            adminCredentials: credentials,
            // Development without keys accepts unsigned tokens, as the Auth Emulator does.
            customTokens: CustomTokenVerifier(keys: keys, acceptsUnsigned: profile == .development),
            signingAlgorithm: signingAlgorithm)
    }

    /// An `adminTokens` entry: a token for every project, or `{"token" | "tokenFile": …,
    /// "projects": [...], "name": …}` for the projects named (a file may hold several tokens, one
    /// a line), recorded in events by its name.
    static func adminCredentials(_ item: JSONValue, source: String) throws -> [AdminCredential] {
        if let token = item.stringValue { return [AdminCredential(token: token)] }
        guard let object = item.objectValue, Set(object.keys).isSubset(of: ["token", "tokenFile", "projects", "name"]) else {
            throw ConfigurationError.invalid("adminTokens", source: source)
        }
        let name = object["name"]?.stringValue
        if object["name"] != nil, !(name.map(AdminCredential.isValidName) ?? false) {
            throw ConfigurationError.invalid("adminTokens name (1 to 64 of letters, digits, . _ -)", source: source)
        }
        var scope = AdminCredential.Scope.everyProject
        if let listed = object["projects"] {
            guard let listed = listed.arrayValue else {
                throw ConfigurationError.invalid("adminTokens projects (a list of project ids)", source: source)
            }
            let projects = try listed.map { entry in
                guard let project = entry.stringValue.flatMap(ProjectID.init) else {
                    throw ConfigurationError.invalid("adminTokens projects", source: source)
                }
                return project
            }
            guard !projects.isEmpty else { throw ConfigurationError.invalid("adminTokens projects (empty)", source: source) }
            scope = .projects(Set(projects))
        }
        let tokens: [String]
        switch (object["token"]?.stringValue, object["tokenFile"]?.stringValue) {
        case (let token?, nil): tokens = [token]
        case (nil, let file?): tokens = try credentialLines(file)
        default: throw ConfigurationError.invalid("adminTokens (one of token, tokenFile)", source: source)
        }
        return tokens.map { AdminCredential(token: $0, scope: scope, name: name) }
    }

    /// A secret file's non-empty lines (systemd `LoadCredential=` or any file an operator keeps).
    static func credentialLines(_ path: String) throws -> [String] {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigurationError.unreadable(path) }
        return contents.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
