import Foundation
import HearthAuth
import HearthDomain
import HearthWire

/// A project's settings in Identity Platform's admin v2 `Config` JSON, the shape of
/// `GET/PATCH /v2/projects/{p}/config`, `hearth project` and the config file's `projects`.
/// Updates follow Google's field-mask rules (AIP-134): the paths in `updateMask` are replaced
/// by the body's values (an absent one by its default); without a mask, every field the body
/// sets is.
public enum ProjectConfigJSON {
    /// A field Hearth stores: its dotted path, and how it reads and writes a `ProjectConfig`.
    package struct Field: Sendable {
        let path: String
        let read: @Sendable (ProjectConfig) -> JSONValue
        let write: @Sendable (inout ProjectConfig, JSONValue?) throws -> Void
    }

    package static func flag(
        _ path: String, _ keyPath: any WritableKeyPath<ProjectConfig, Bool> & Sendable, inverted: Bool = false
    ) -> Field {
        Field(
            path: path, read: { .bool($0[keyPath: keyPath] != inverted) },
            write: { config, value in
                switch value {
                case nil: config[keyPath: keyPath] = inverted
                case .bool(let flag)?: config[keyPath: keyPath] = flag != inverted
                default: throw invalidValue(path, "a boolean")
                }
            })
    }

    package static let fields: [Field] = ownFields + PasswordPolicyJSON.fields

    private static let ownFields: [Field] = [
        flag("signIn.email.enabled", \.emailPasswordEnabled),
        // passwordRequired: email link sign-in is off.
        flag("signIn.email.passwordRequired", \.emailLinkEnabled, inverted: true),
        flag("signIn.anonymous.enabled", \.anonymousEnabled),
        flag("signIn.allowDuplicateEmails", \.oneAccountPerEmail, inverted: true),
        Field(
            path: "authorizedDomains", read: { .array($0.authorizedDomains.map(JSONValue.string)) },
            write: { config, value in config.authorizedDomains = try domains(value) }),
        flag("autodeleteAnonymousUsers", \.anonymousCleanup),
        // Hearth's own: the domains email links an app opens itself are served on (Firebase's
        // Hosting link domains); the first is the default.
        Field(
            path: "linkDomains", read: { .array($0.linkDomains.map(JSONValue.string)) },
            write: { config, value in config.linkDomains = try domains(value, "linkDomains") }),
        flag("emailPrivacyConfig.enableImprovedEmailPrivacy", \.improvedEmailPrivacy),
        // Hearth's own: the apps headful sign-ins may return to (Firebase's registered apps).
        Field(
            path: "registeredApps.iosBundleIds", read: { .array($0.iosBundleIds.map(JSONValue.string)) },
            write: { config, value in config.iosBundleIds = try appIds(value, "registeredApps.iosBundleIds") }),
        Field(
            path: "registeredApps.androidPackages", read: { .array($0.androidPackages.map(JSONValue.string)) },
            write: { config, value in config.androidPackages = try appIds(value, "registeredApps.androidPackages") }),
        // Hearth's own, named as Firebase's IosApp and AndroidApp: what the link domains'
        // apple-app-site-association and assetlinks.json list (RegisteredAppsJSON).
        Field(
            path: "registeredApps.iosApps", read: { .array($0.iosApps.map(RegisteredAppsJSON.render)) },
            write: { config, value in config.iosApps = try RegisteredAppsJSON.iosApps(value, "registeredApps.iosApps") }),
        Field(
            path: "registeredApps.androidApps", read: { .array($0.androidApps.map(RegisteredAppsJSON.render)) },
            write: { config, value in config.androidApps = try RegisteredAppsJSON.androidApps(value, "registeredApps.androidApps") }),
        // Multi-factor: the project's state and TOTP's provider config (MultiFactorConfigJSON).
        Field(
            path: "mfa.state", read: { .string($0.multiFactor.state.rawValue) },
            write: { config, value in config.multiFactor.state = try MultiFactorConfigJSON.state(value, "mfa.state") }),
        Field(
            path: "mfa.enabledProviders", read: { _ in .array([]) },
            write: { _, value in try MultiFactorConfigJSON.enabledProviders(value) }),
        Field(
            path: "mfa.providerConfigs", read: { MultiFactorConfigJSON.providerConfigs($0.multiFactor) },
            write: { config, value in try MultiFactorConfigJSON.apply(providerConfigs: value, to: &config.multiFactor) }),
        // Hearth's own: shortens Firebase's 30-day anonymous cleanup period, for tests and staging.
        Field(
            path: "anonymousCleanupAfterSeconds", read: { .string(String($0.anonymousCleanupPeriodSeconds)) },
            write: { config, value in
                guard let value else {
                    config.anonymousCleanupPeriodSeconds = ProjectConfig().anonymousCleanupPeriodSeconds
                    return
                }
                let seconds: Int64? =
                    switch value {
                    case .int(let number): number
                    case .string(let text): Int64(text)
                    default: nil
                    }
                guard let seconds, ProjectConfig.anonymousCleanupPeriodRange.contains(seconds) else {
                    throw invalidValue("anonymousCleanupAfterSeconds", "whole seconds from 1 to 2592000 (30 days)")
                }
                config.anonymousCleanupPeriodSeconds = seconds
            }),
    ]

    /// Output only.
    package static let readOnly: Set<String> = ["name", "subtype", "signIn.hashConfig", "client"]

    /// Fields of Firebase's `Config` that Hearth does not implement: named in a mask (or set
    /// without one), they are refused rather than silently dropped.
    package static let unsupported: Set<String> = [
        "signIn.phoneNumber", "blockingFunctions", "multiTenant", "notification", "quota", "monitoring",
        "recaptchaConfig", "smsRegionConfig", "mobileLinksConfig", "defaultHostingSite",
    ]

    public static func render(_ config: ProjectConfig, project: ProjectID) -> JSONValue {
        var root: [String: JSONValue] = ["name": .string("projects/\(project.rawValue)/config")]
        for field in fields { insert(field.read(config), at: field.path.split(separator: ".")[...], into: &root) }
        return .object(root)
    }

    /// The settings `body` (with `updateMask`, comma-separated paths, if given) makes of `current`.
    public static func apply(_ body: JSONValue, updateMask: String?, to current: ProjectConfig) throws -> ProjectConfig {
        guard let object = body.objectValue else { throw FirebaseError.invalidArgument("The config must be a JSON object.") }
        var present: [String: JSONValue] = [:]
        try flatten(object, prefix: "", into: &present)
        let mask: [String] =
            if let updateMask, !updateMask.isEmpty {
                updateMask.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            } else {
                // Output-only fields sent back (a GET's answer, edited) are ignored.
                present.keys.filter { !readOnly.contains($0) }.sorted()
            }
        var updated = current
        for path in mask {
            if readOnly.contains(where: { covers($0, path) }) {
                throw FirebaseError.bad("INVALID_CONFIG : ((\(path) is output only and can not be updated.))")
            }
            let refused = unsupported.first { covers($0, path) || (covers(path, $0) && present[$0] != nil) }
            if let refused {
                throw FirebaseError.bad("INVALID_CONFIG : ((\(refused) is not supported by Hearth.))")
            }
            let matched = fields.filter { covers(path, $0.path) }
            guard !matched.isEmpty else {
                throw FirebaseError.invalidArgument("Invalid update mask path: \"\(path)\" is not a field of Config.")
            }
            for field in matched { try field.write(&updated, present[field.path]) }
        }
        return updated
    }

    /// Whether mask path `outer` includes field path `inner` (itself, or a field inside it).
    package static func covers(_ outer: String, _ inner: String) -> Bool {
        inner == outer || inner.hasPrefix(outer + ".")
    }

    /// The body's leaves by dotted path. An unknown name is refused, as Google's JSON parser
    /// refuses it; a known field Hearth does not implement is kept, for the mask to refuse.
    private static func flatten(_ object: [String: JSONValue], prefix: String, into leaves: inout [String: JSONValue])
        throws
    {
        for (name, value) in object {
            let path = prefix.isEmpty ? name : prefix + "." + name
            if unsupported.contains(path) || readOnly.contains(path) || fields.contains(where: { $0.path == path }) {
                leaves[path] = value
            } else if let inner = value.objectValue, fields.contains(where: { covers(path, $0.path) }) {
                try flatten(inner, prefix: path, into: &leaves)
            } else {
                throw FirebaseError.invalidArgument(
                    "Unknown name \"\(name)\" at 'config\(prefix.isEmpty ? "" : "." + prefix)': Cannot find field.")
            }
        }
    }

    /// Sets `value` at a dotted path inside `object`, making the objects on the way.
    package static func insert(_ value: JSONValue, at path: ArraySlice<Substring>, into object: inout [String: JSONValue]) {
        guard let first = path.first else { return }
        let key = String(first)
        if path.count == 1 {
            object[key] = value
            return
        }
        var inner = object[key]?.objectValue ?? [:]
        insert(value, at: path.dropFirst(), into: &inner)
        object[key] = .object(inner)
    }

    package static func invalidValue(_ path: String, _ expected: String) -> FirebaseError {
        FirebaseError.invalidArgument("Invalid value at 'config.\(path)': expected \(expected).")
    }

    /// Authorized domains: host names (or IP addresses) without scheme, port or path, at most
    /// 100, each listed once, lowercased.
    package static func domains(_ value: JSONValue?, _ path: String = "authorizedDomains") throws -> [String] {
        guard let value else { return [] }
        guard let items = value.arrayValue, items.count <= 100 else {
            throw invalidValue(path, "a list of at most 100 domains")
        }
        var domains: [String] = []
        for item in items {
            guard let text = item.stringValue?.lowercased(), isDomain(text) else {
                throw FirebaseError.bad("INVALID_CONFIG : ((\(path): \(item.stringValue ?? "a non-string") is not a domain.))")
            }
            if !domains.contains(text) { domains.append(text) }
        }
        return domains
    }

    /// iOS bundle ids or Android package names: at most 50, each `A-Z a-z 0-9 . _ -`.
    package static func appIds(_ value: JSONValue?, _ path: String) throws -> [String] {
        guard let value else { return [] }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-".utf8)
        guard let items = value.arrayValue, items.count <= 50 else { throw invalidValue(path, "a list of at most 50 app ids") }
        return try items.map { item in
            guard let id = item.stringValue, (1...155).contains(id.utf8.count), id.utf8.allSatisfy(allowed.contains) else {
                throw invalidValue(path, "app ids of A-Z, a-z, 0-9, '.', '_' and '-'")
            }
            return id
        }
    }

    package static func isDomain(_ text: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-".utf8)
        guard (1...253).contains(text.utf8.count), text.utf8.allSatisfy(allowed.contains) else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
        }
    }
}
