import HearthAuth
import HearthDomain
import HearthWire

/// The v2 config's `mfa` as Identity Platform shapes it: `state` (`DISABLED`, `ENABLED`,
/// `MANDATORY`), `enabledProviders` (SMS, which Hearth does not send, so only empty) and
/// `providerConfigs` with one TOTP entry, `{state, totpProviderConfig: {adjacentIntervals}}`.
enum MultiFactorConfigJSON {
    static func state(_ value: JSONValue?, _ path: String) throws -> MultiFactorConfig.State {
        guard let value else { return .disabled }
        guard let text = value.stringValue, let state = MultiFactorConfig.State(rawValue: text) else {
            throw ProjectConfigJSON.invalidValue(path, "DISABLED, ENABLED or MANDATORY")
        }
        return state
    }

    static func enabledProviders(_ value: JSONValue?) throws {
        guard let value else { return }
        guard let providers = value.arrayValue else { throw ProjectConfigJSON.invalidValue("mfa.enabledProviders", "an array") }
        guard providers.isEmpty else {
            throw FirebaseError.bad("INVALID_CONFIG : ((mfa.enabledProviders: SMS second factors are not supported by Hearth.))")
        }
    }

    /// Rendered only once TOTP was configured: a new project has none, as in Firebase.
    static func providerConfigs(_ config: MultiFactorConfig) -> JSONValue {
        guard config.totpEnabled || config.adjacentIntervals != MultiFactorConfig().adjacentIntervals else { return .array([]) }
        return [
            [
                "state": .string(config.totpEnabled ? "ENABLED" : "DISABLED"),
                "totpProviderConfig": ["adjacentIntervals": .int(Int64(config.adjacentIntervals))],
            ]
        ]
    }

    static func apply(providerConfigs value: JSONValue?, to config: inout MultiFactorConfig) throws {
        let path = "mfa.providerConfigs"
        config.totpEnabled = false
        config.adjacentIntervals = MultiFactorConfig().adjacentIntervals
        guard let value else { return }
        guard let entries = value.arrayValue, entries.count <= 1 else {
            throw ProjectConfigJSON.invalidValue(path, "an array with at most one TOTP provider config")
        }
        for entry in entries {
            guard let object = entry.objectValue, let totp = object["totpProviderConfig"]?.objectValue,
                Set(object.keys).isSubset(of: ["state", "totpProviderConfig"]), Set(totp.keys).isSubset(of: ["adjacentIntervals"])
            else {
                throw ProjectConfigJSON.invalidValue(path, "entries of {state, totpProviderConfig: {adjacentIntervals}}")
            }
            let state = try self.state(object["state"], path + ".state")
            config.totpEnabled = state != .disabled
            if let intervals = totp["adjacentIntervals"] {
                guard case .int(let count) = intervals, MultiFactorConfig.adjacentIntervalsRange.contains(Int(count)) else {
                    throw ProjectConfigJSON.invalidValue(path + ".totpProviderConfig.adjacentIntervals", "a whole number from 0 to 10")
                }
                config.adjacentIntervals = Int(count)
            }
        }
    }
}
