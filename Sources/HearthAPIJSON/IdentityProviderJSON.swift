import Foundation
import HearthAuth
import HearthDomain
import HearthWire

/// Identity Platform's `DefaultSupportedIdpConfig` and `OAuthIdpConfig` JSON. A response never
/// carries the client secret; a request's secret is sealed before anything records it.
public enum IdentityProviderJSON {
    /// The built-in providers `defaultSupportedIdpConfigs` accepts.
    public static let builtIn: Set<ProviderID> = [
        .google, .facebook, .github, .yahoo, .apple, "microsoft.com", "twitter.com", "linkedin.com",
        "playgames.google.com", "gc.apple.com",
    ]

    public enum Kind: Sendable {
        case defaultSupported, openIDConnect

        public var collection: String { self == .defaultSupported ? "defaultSupportedIdpConfigs" : "oauthIdpConfigs" }
    }

    /// A provider id valid for `kind`, else `INVALID_PROVIDER_ID`.
    public static func providerId(_ text: String?, _ kind: Kind) throws -> ProviderID {
        guard let text, !text.isEmpty else { throw FirebaseError.bad("INVALID_PROVIDER_ID : ((A provider id is required.))") }
        let id = ProviderID(text)
        switch kind {
        case .defaultSupported:
            guard builtIn.contains(id) else {
                throw FirebaseError.bad("INVALID_PROVIDER_ID : ((\(text) is not a supported identity provider.))")
            }
        case .openIDConnect:
            let name = text.dropFirst("oidc.".count)
            let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-".utf8)
            guard text.hasPrefix("oidc."), (1...64).contains(name.utf8.count), name.utf8.allSatisfy(allowed.contains) else {
                throw FirebaseError.bad("INVALID_PROVIDER_ID : ((OpenID Connect provider ids are oidc. and a name of a-z, 0-9, -.))")
            }
        }
        return id
    }

    public static func render(_ provider: IdentityProviderConfig, project: ProjectID) -> JSONValue {
        let kind: Kind = provider.isOpenIDConnect ? .openIDConnect : .defaultSupported
        var body: [String: JSONValue] = [
            "name": .string("projects/\(project.rawValue)/\(kind.collection)/\(provider.providerId.rawValue)"),
            "enabled": .bool(provider.enabled), "clientId": .string(provider.clientId),
        ]
        if kind == .openIDConnect {
            body["issuer"] = provider.issuer.map(JSONValue.string)
            body["displayName"] = provider.displayName.map(JSONValue.string)
            body["responseType"] = ["idToken": .bool(provider.responseType.idToken), "code": .bool(provider.responseType.code)]
        }
        // Hearth's own: other clients whose id_tokens count, and which secret is in force.
        if !provider.additionalClientIds.isEmpty {
            body["additionalClientIds"] = .array(provider.additionalClientIds.map(JSONValue.string))
        }
        switch provider.clientSecret {
        case .sealed(_, let fingerprint)?: body["clientSecretFingerprint"] = .string(fingerprint)
        case .file(let path)?: body["clientSecretFile"] = .string(path)
        case nil: break
        }
        return .object(body)
    }

    /// Where `clientSecretFile` may point: anywhere for the operator's config file; through the
    /// API, for the operator's credential (one for every project), only inside the directory the
    /// operator named (`secretFilesDirectory`, by default systemd's `$CREDENTIALS_DIRECTORY`); for
    /// a project's own admin, nowhere. That directory holds the operator's admin token, the SMTP
    /// password and every project's provider secrets: a file a tenant could name is a secret the
    /// daemon would send, as `client_secret`, to a token endpoint the tenant chose.
    public enum SecretFiles: Sendable {
        case anywhere
        case within(String?)
        /// A project's admin: a provider's secret comes in the request (`clientSecret`, sealed).
        case operatorOnly

        func check(_ path: String) throws {
            switch self {
            case .anywhere: return
            case .operatorOnly:
                throw FirebaseError(
                    httpStatus: 403,
                    message:
                        "PERMISSION_DENIED : ((clientSecretFile can be set only by the operator's credential or in the config file; send the secret itself as clientSecret.))",
                    status: "PERMISSION_DENIED", reason: "forbidden")
            case .within(let directory):
                guard let directory, Self.path(path, isInside: directory) else {
                    throw FirebaseError.bad(
                        "INVALID_CONFIG : ((clientSecretFile must be inside the secretFilesDirectory the operator set.))")
                }
            }
        }

        static func path(_ path: String, isInside directory: String) -> Bool {
            let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
            let root = URL(fileURLWithPath: directory).standardizedFileURL.path
            return path.hasPrefix("/") && !path.contains("/../") && standardized.hasPrefix(root.hasSuffix("/") ? root : root + "/")
        }
    }

    /// A `clientSecret` in a request, sealed before the write begins (sealing, and creating the
    /// secrets key the first time, is no work for the writer's transaction). The config file has
    /// no sealed secrets: its secrets are files (`clientSecretFile`).
    public enum SecretInput: Sendable {
        case filesOnly
        case sealed(ClientSecret?)

        public static func seal(_ body: [String: JSONValue], with sealer: SecretSealer) throws -> SecretInput {
            guard let secret = try string(body["clientSecret"], "clientSecret", maxBytes: 512) else { return .sealed(nil) }
            return .sealed(try sealer.seal(secret))
        }
    }

    /// The configuration `body` makes of `current` (`nil`: a new one) under `updateMask` (or,
    /// without one, every field the body sets), as the v2 API's field masks do.
    public static func apply(
        _ body: [String: JSONValue], updateMask: String?, to current: IdentityProviderConfig?, providerId: ProviderID,
        kind: Kind, secret: SecretInput, secretFiles: SecretFiles
    ) throws -> IdentityProviderConfig {
        var fields: Set<String> = ["enabled", "clientId", "clientSecret", "clientSecretFile", "additionalClientIds"]
        if kind == .openIDConnect { fields.formUnion(["issuer", "displayName", "responseType.idToken", "responseType.code"]) }
        var present: [String: JSONValue] = [:]
        for (name, value) in body {
            if name == "responseType", kind == .openIDConnect, let inner = value.objectValue {
                for (innerName, innerValue) in inner {
                    guard fields.contains("responseType." + innerName) else { throw unknown(innerName, at: "responseType") }
                    present["responseType." + innerName] = innerValue
                }
            } else if fields.contains(name) {
                present[name] = value
            } else if name != "name" {
                throw unknown(name, at: nil)
            }
        }
        let mask: [String] =
            if let updateMask, !updateMask.isEmpty {
                try updateMask.split(separator: ",").flatMap { path -> [String] in
                    let path = path.trimmingCharacters(in: .whitespaces)
                    let matched = fields.filter { $0 == path || $0.hasPrefix(path + ".") }
                    guard !matched.isEmpty else {
                        throw FirebaseError.invalidArgument("Invalid update mask path: \"\(path)\" is not a field of the provider config.")
                    }
                    return matched.sorted()
                }
            } else {
                present.keys.sorted()
            }
        let isNew = current == nil
        var provider =
            current
            ?? IdentityProviderConfig(
                providerId: providerId, enabled: false, clientId: "",
                responseType: .init(idToken: kind == .openIDConnect, code: kind == .defaultSupported))
        if isNew && kind == .openIDConnect && (present["responseType.idToken"] != nil || present["responseType.code"] != nil) {
            provider.responseType = .init(idToken: false, code: false)
        }
        for path in mask {
            let value = present[path]
            switch path {
            case "enabled": provider.enabled = try bool(value, path) ?? false
            case "clientId": provider.clientId = try string(value, path, maxBytes: 256) ?? ""
            case "clientSecret":
                guard case .sealed(let sealed) = secret else {
                    throw FirebaseError.bad("INVALID_CONFIG : ((use clientSecretFile, not clientSecret))")
                }
                provider.clientSecret = try string(value, path, maxBytes: 512) == nil ? nil : sealed
            case "clientSecretFile":
                let file = try string(value, path, maxBytes: 1024)
                if let file { try secretFiles.check(file) }
                provider.clientSecret = file.map { .file(path: $0) }
            case "issuer": provider.issuer = try string(value, path, maxBytes: 512)
            case "additionalClientIds": provider.additionalClientIds = try strings(value, path)
            case "displayName": provider.displayName = try string(value, path, maxBytes: 256)
            case "responseType.idToken": provider.responseType.idToken = try bool(value, path) ?? false
            case "responseType.code": provider.responseType.code = try bool(value, path) ?? false
            default: break
            }
        }
        // A secret was given for one client at one issuer: pointed elsewhere, it goes, unless
        // the same update gives it again (else an admin could send it to an issuer of theirs).
        if let current, provider.issuer != current.issuer || provider.clientId != current.clientId,
            !mask.contains("clientSecret") && !mask.contains("clientSecretFile")
        {
            provider.clientSecret = nil
        }
        try validate(provider, kind)
        return provider
    }

    package static func validate(_ provider: IdentityProviderConfig, _ kind: Kind) throws {
        guard !provider.clientId.isEmpty else { throw FirebaseError.bad("INVALID_CONFIG : ((clientId is required.))") }
        guard kind == .openIDConnect else { return }
        // Keys and discovery over plain HTTP would let anyone on the path forge id_tokens (a
        // loopback issuer is a developer's; each fetch checks scheme and address again). A `?`
        // or `#` would move the discovery fetch to another path; user info has no place in it.
        guard let issuer = provider.issuer, let url = try? ProviderURL.issuer(issuer),
            url.scheme == "https" || ["127.0.0.1", "localhost", "::1"].contains(url.host)
        else {
            throw FirebaseError.bad(
                "INVALID_CONFIG : ((issuer must be an absolute https URL without user info, query or fragment.))")
        }
        guard provider.responseType.idToken != provider.responseType.code else {
            throw FirebaseError.bad("INVALID_CONFIG : ((responseType: exactly one of idToken and code.))")
        }
    }

    private static func unknown(_ name: String, at parent: String?) -> FirebaseError {
        FirebaseError.invalidArgument("Unknown name \"\(name)\" at 'config\(parent.map { "." + $0 } ?? "")': Cannot find field.")
    }

    private static func bool(_ value: JSONValue?, _ path: String) throws -> Bool? {
        switch value {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw FirebaseError.invalidArgument("Invalid value at 'config.\(path)': expected a boolean.")
        }
    }

    /// Up to 20 client ids (a comma-separated string from the command line works too).
    private static func strings(_ value: JSONValue?, _ path: String) throws -> [String] {
        let items: [JSONValue] =
            switch value {
            case nil, .null?: []
            case .array(let items)?: items
            case .string(let text)?: text.split(separator: ",").map { .string(String($0)) }
            default: throw FirebaseError.invalidArgument("Invalid value at 'config.\(path)': expected a list of client ids.")
            }
        guard items.count <= 20 else { throw FirebaseError.invalidArgument("Invalid value at 'config.\(path)': at most 20.") }
        return try items.map { item in
            guard let id = try string(item, path, maxBytes: 256) else {
                throw FirebaseError.invalidArgument("Invalid value at 'config.\(path)': expected client ids.")
            }
            return id
        }
    }

    private static func string(_ value: JSONValue?, _ path: String, maxBytes: Int) throws -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.utf8.count <= maxBytes: return text.isEmpty ? nil : text
        default: throw FirebaseError.invalidArgument("Invalid value at 'config.\(path)': expected a string of at most \(maxBytes) bytes.")
        }
    }
}
