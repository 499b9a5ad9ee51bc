import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import Testing

/// The project's password policy: `passwordPolicyConfig` in the v2 config, `GET
/// /v2/passwordPolicy` for the web SDK's `validatePassword()`, and its enforcement on the
/// passwords users choose.
@Suite("password policy")
struct PasswordPolicyTests {
    static let strict: JSONValue = [
        "passwordPolicyConfig": [
            "passwordPolicyEnforcementState": "ENFORCE",
            "passwordPolicyVersions": [
                [
                    "customStrengthOptions": [
                        "minPasswordLength": 10, "containsUppercaseCharacter": true, "containsNumericCharacter": true,
                        "containsNonAlphanumericCharacter": true,
                    ]
                ]
            ],
        ]
    ]

    static func policy(_ api: APIClient) async throws -> Reply {
        try await api.send(.get, "/identitytoolkit.googleapis.com/v2/passwordPolicy?key=test-key", body: nil, headers: [:])
    }

    @Test("the policy as the web SDK reads it, off by default and as configured")
    func publishedPolicy() async throws {
        try await APIHarness.run { _, api in
            let initial = try await Self.policy(api)
            #expect(initial.status == 200)
            #expect(initial["enforcementState"] == "OFF")
            #expect(initial["schemaVersion"] == 1)
            #expect(initial["customStrengthOptions"] == ["minPasswordLength": 6, "maxPasswordLength": 4096])
            #expect(try await ProjectConfigTests.patch(api, Self.strict, mask: "passwordPolicyConfig").status == 200)
            let strict = try await Self.policy(api)
            #expect(strict["enforcementState"] == "ENFORCE")
            #expect(
                strict["customStrengthOptions"] == [
                    "minPasswordLength": 10, "maxPasswordLength": 4096, "containsUppercaseCharacter": true,
                    "containsNumericCharacter": true, "containsNonAlphanumericCharacter": true,
                ])
            #expect(strict["allowedNonAlphanumericCharacters"]?.arrayValue?.contains("!") == true)
            let config = try await ProjectConfigTests.get(api)
            #expect(config["passwordPolicyConfig"]?["passwordPolicyEnforcementState"] == "ENFORCE")
            // Out of Identity Platform's bounds: a 400, nothing recorded.
            let short: JSONValue = [
                "passwordPolicyConfig": ["passwordPolicyVersions": [["customStrengthOptions": ["minPasswordLength": 5]]]]
            ]
            #expect(try await ProjectConfigTests.patch(api, short).status == 400)
            #expect(try await Self.policy(api)["customStrengthOptions"]?["minPasswordLength"] == 10)
        }
    }

    @Test("enforced on sign-up, linking, a user's change and a reset; an administrator may set any password")
    func enforcement() async throws {
        try await APIHarness.run { _, api in
            #expect(try await ProjectConfigTests.patch(api, Self.strict, mask: "passwordPolicyConfig").status == 200)
            let weak = try await api.signUp(email: "weak@example.com", password: "weakpassword")
            #expect(
                weak.json["error"]?["message"]
                    == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain an upper case character, Password must contain a numeric character, Password must contain a non-alphanumeric character]"
            )
            #expect(
                try await api.signUp(email: "short@example.com", password: "S1!short").errorCode == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
            let strong = try await api.signUp(email: "strong@example.com", password: "Correct-Horse-42")
            #expect(strong.status == 200)
            let idToken = try #require(strong["idToken"])
            #expect(
                try await api.v1("update", ["idToken": idToken, "password": "weakpassword"]).errorCode
                    == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
            #expect(try await api.v1("update", ["idToken": idToken, "password": "Another-Horse-43"]).status == 200)
            let anonymous = try await api.v1("signUp", ["returnSecureToken": true])
            let link: JSONValue = ["idToken": anonymous["idToken"]!, "email": "linked@example.com", "password": "weakpassword"]
            #expect(try await api.v1("signUp", link).errorCode == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
            let uid = try #require(strong["localId"])
            #expect(try await api.admin("accounts:update", ["localId": uid, "password": "weakpassword"]).status == 200)

            #expect(try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "strong@example.com"]).status == 200)
            let listed = try await api.send(.get, "/emulator/v1/projects/demo-hearth/oobCodes", body: nil, headers: [:])
            let code = try #require(listed["oobCodes"]?.arrayValue?.last?["oobCode"])
            #expect(
                try await api.v1("resetPassword", ["oobCode": code, "newPassword": "weakpassword"]).errorCode
                    == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
            #expect(try await api.v1("resetPassword", ["oobCode": code, "newPassword": "Reset-Horse-44"]).status == 200)
        }
    }

    @Test("forceUpgradeOnSignin: a right password the policy refuses must be changed first")
    func forceUpgrade() async throws {
        try await APIHarness.run { _, api in
            let created = try await api.admin("accounts", ["email": "old@example.com", "password": "oldweakpw"])
            #expect(created.status == 200)
            #expect(try await ProjectConfigTests.patch(api, Self.strict, mask: "passwordPolicyConfig").status == 200)
            let signIn: JSONValue = ["email": "old@example.com", "password": "oldweakpw"]
            #expect(try await api.v1("signInWithPassword", signIn).status == 200)
            var force = Self.strict
            if case .object(var root) = force, case .object(var config)? = root["passwordPolicyConfig"] {
                config["forceUpgradeOnSignin"] = true
                root["passwordPolicyConfig"] = .object(config)
                force = .object(root)
            }
            #expect(try await ProjectConfigTests.patch(api, force, mask: "passwordPolicyConfig").status == 200)
            #expect(try await Self.policy(api)["forceUpgradeOnSignin"] == true)
            #expect(try await api.v1("signInWithPassword", signIn).errorCode == "PASSWORD_DOES_NOT_MEET_REQUIREMENTS")
            // A wrong password is still just wrong.
            #expect(
                try await api.v1("signInWithPassword", ["email": "old@example.com", "password": "nope-nope"]).errorCode
                    == "INVALID_PASSWORD")
        }
    }
}
