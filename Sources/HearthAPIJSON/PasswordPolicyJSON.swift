import HearthAuth
import HearthDomain
import HearthWire

/// The password policy in its two shapes: the v2 config's `passwordPolicyConfig` (admin) and
/// `GET /v2/passwordPolicy` (what the web SDK's `validatePassword()` reads, schema version 1).
public enum PasswordPolicyJSON {
    static let configPath = "passwordPolicyConfig"

    /// The v2 config's fields (ProjectConfigJSON).
    static let fields: [ProjectConfigJSON.Field] = [
        ProjectConfigJSON.Field(
            path: configPath + ".passwordPolicyEnforcementState",
            read: { .string($0.passwordPolicy.enforced ? "ENFORCE" : "OFF") },
            write: { config, value in
                switch value?.stringValue {
                case nil where value == nil, "OFF"?, "PASSWORD_POLICY_ENFORCEMENT_STATE_UNSPECIFIED"?:
                    config.passwordPolicy.enforced = false
                case "ENFORCE"?: config.passwordPolicy.enforced = true
                default: throw ProjectConfigJSON.invalidValue(configPath + ".passwordPolicyEnforcementState", "ENFORCE or OFF")
                }
            }),
        ProjectConfigJSON.flag(configPath + ".forceUpgradeOnSignin", \.passwordPolicy.forceUpgradeOnSignIn),
        ProjectConfigJSON.Field(
            path: configPath + ".passwordPolicyVersions", read: { .array([strengthOptions($0.passwordPolicy)]) },
            write: { config, value in try apply(versions: value, to: &config.passwordPolicy) }),
    ]

    /// `{customStrengthOptions: {...}}`, the one version a policy has.
    static func strengthOptions(_ policy: PasswordPolicy) -> JSONValue {
        [
            "customStrengthOptions": [
                "minPasswordLength": .int(Int64(policy.minLength)), "maxPasswordLength": .int(Int64(policy.maxLength)),
                "containsLowercaseCharacter": .bool(policy.requireLowercase),
                "containsUppercaseCharacter": .bool(policy.requireUppercase),
                "containsNumericCharacter": .bool(policy.requireNumeric),
                "containsNonAlphanumericCharacter": .bool(policy.requireNonAlphanumeric),
            ]
        ]
    }

    static func apply(versions value: JSONValue?, to policy: inout PasswordPolicy) throws {
        let path = configPath + ".passwordPolicyVersions"
        let defaults = PasswordPolicy()
        (policy.minLength, policy.maxLength) = (defaults.minLength, defaults.maxLength)
        (policy.requireUppercase, policy.requireLowercase) = (false, false)
        (policy.requireNumeric, policy.requireNonAlphanumeric) = (false, false)
        guard let value else { return }
        guard let versions = value.arrayValue, versions.count <= 1 else {
            throw ProjectConfigJSON.invalidValue(path, "an array of one version")
        }
        guard let version = versions.first else { return }
        let known: Set<String> = [
            "minPasswordLength", "maxPasswordLength", "containsLowercaseCharacter", "containsUppercaseCharacter",
            "containsNumericCharacter", "containsNonAlphanumericCharacter",
        ]
        guard let object = version.objectValue, Set(object.keys).isSubset(of: ["customStrengthOptions", "schemaVersion"]),
            let options = (object["customStrengthOptions"] ?? [:]).objectValue, Set(options.keys).isSubset(of: known)
        else { throw ProjectConfigJSON.invalidValue(path, "versions of {customStrengthOptions: {...}}") }
        func flag(_ key: String) throws -> Bool {
            switch options[key] {
            case nil: return false
            case .bool(let value)?: return value
            default: throw ProjectConfigJSON.invalidValue(path + ".customStrengthOptions." + key, "a boolean")
            }
        }
        func length(_ key: String, _ fallback: Int) throws -> Int {
            switch options[key] {
            case nil: return fallback
            case .int(let value)?: return Int(clamping: value)
            default: throw ProjectConfigJSON.invalidValue(path + ".customStrengthOptions." + key, "a whole number")
            }
        }
        policy.minLength = try length("minPasswordLength", defaults.minLength)
        policy.maxLength = try length("maxPasswordLength", defaults.maxLength)
        policy.requireLowercase = try flag("containsLowercaseCharacter")
        policy.requireUppercase = try flag("containsUppercaseCharacter")
        policy.requireNumeric = try flag("containsNumericCharacter")
        policy.requireNonAlphanumeric = try flag("containsNonAlphanumericCharacter")
        guard policy.isValid else {
            throw ProjectConfigJSON.invalidValue(path, "minPasswordLength from 6 to 30 and maxPasswordLength from it to 4096")
        }
    }

    /// `GET /v2/passwordPolicy`: Identity Platform's `PasswordPolicy`, schema version 1.
    public static func render(_ policy: PasswordPolicy) -> JSONValue {
        var options = strengthOptions(policy)["customStrengthOptions"]?.objectValue ?? [:]
        // Only the requirements that hold are listed, as Identity Platform answers.
        for key in options.keys where options[key] == .bool(false) { options[key] = nil }
        return [
            "customStrengthOptions": .object(options),
            "allowedNonAlphanumericCharacters": .array(PasswordPolicy.nonAlphanumericCharacters.map { .string(String($0)) }),
            "enforcementState": .string(policy.enforced ? "ENFORCE" : "OFF"),
            "forceUpgradeOnSignin": .bool(policy.forceUpgradeOnSignIn),
            "schemaVersion": 1,
        ]
    }
}
