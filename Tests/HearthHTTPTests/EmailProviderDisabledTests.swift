import HearthWire
import Testing

/// With the Email/Password provider off (`signIn.email.enabled: false`), nothing signs in or
/// links by email, as in Firebase: a password sign-in answers PASSWORD_LOGIN_DISABLED, linking
/// a password or completing an email link OPERATION_NOT_ALLOWED. Email links alone can be
/// turned off too (`passwordRequired: true`).
@Suite("the Email/Password provider turned off")
struct EmailProviderDisabledTests {
    static func setEmailProvider(_ api: APIClient, enabled: Bool, passwordRequired: Bool = false) async throws {
        let patched = try await ProjectConfigTests.patch(
            api, ["signIn": ["email": ["enabled": .bool(enabled), "passwordRequired": .bool(passwordRequired)]]],
            mask: "signIn.email.enabled,signIn.email.passwordRequired")
        #expect(patched.status == 200, "\(patched.json)")
    }

    @Test("signInWithPassword answers PASSWORD_LOGIN_DISABLED, on both paths, before anything else")
    func passwordSignIn() async throws {
        try await APIHarness.run { _, api in
            #expect(try await api.signUp(email: "pw@example.com").status == 200)
            try await Self.setEmailProvider(api, enabled: false)
            let body: JSONValue = ["email": "pw@example.com", "password": "correct-horse-42", "returnSecureToken": true]
            #expect(try await api.v1("signInWithPassword", body).errorCode == "PASSWORD_LOGIN_DISABLED")
            #expect(try await api.v3("verifyPassword", body).errorCode == "PASSWORD_LOGIN_DISABLED")
            #expect(
                try await api.v1("signInWithPassword", ["email": "unknown@example.com", "password": "x"]).errorCode
                    == "PASSWORD_LOGIN_DISABLED")
            try await Self.setEmailProvider(api, enabled: true)
            #expect(try await api.v1("signInWithPassword", body).status == 200)
        }
    }

    @Test("a session that signed in by password goes on: changing the email ends the sessions and continues the caller's")
    func passwordSessionsGoOn() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "going@example.com")
            try await Self.setEmailProvider(api, enabled: false)
            // Not a new password sign-in: the caller's own session continues in a new token.
            let changed = try await api.v1(
                "update", ["idToken": user["idToken"] ?? .null, "email": "moved@example.com", "returnSecureToken": true])
            #expect(changed.status == 200, "\(changed.json)")
            #expect(changed.string("email") == "moved@example.com" && changed.string("idToken") != nil)
            #expect(try await api.lookup(try #require(changed.string("idToken"))).status == 200)
        }
    }

    @Test("linking or setting a password is OPERATION_NOT_ALLOWED; an administrator still may")
    func passwordLinking() async throws {
        try await APIHarness.run { _, api in
            let anonymous = try await api.v1("signUp", ["returnSecureToken": true])
            let user = try await api.signUp(email: "has@example.com")
            try await Self.setEmailProvider(api, enabled: false)
            let linked = try await api.v1(
                "signUp", ["idToken": anonymous["idToken"] ?? .null, "email": "link@example.com", "password": "correct-horse-42"])
            #expect(linked.errorCode == "OPERATION_NOT_ALLOWED")
            let updated = try await api.v1("update", ["idToken": anonymous["idToken"] ?? .null, "password": "correct-horse-42"])
            #expect(updated.errorCode == "OPERATION_NOT_ALLOWED")
            let changed = try await api.v3("setAccountInfo", ["idToken": user["idToken"] ?? .null, "password": "another-horse-43"])
            #expect(changed.errorCode == "OPERATION_NOT_ALLOWED")
            #expect(try await api.lookup(try #require(anonymous.string("idToken")))["users"]?.arrayValue?.first?["passwordHash"] == nil)
            let admin = try await api.admin("accounts:update", ["localId": user["localId"] ?? .null, "password": "admin-horse-44"])
            #expect(admin.status == 200, "\(admin.json)")
        }
    }

    @Test("completing an email link is OPERATION_NOT_ALLOWED when the provider or email links are off")
    func emailLink() async throws {
        for passwordRequired in [false, true] {
            try await APIHarness.run { _, api in
                let code = try await EmailLinkTests.sendLink(api, to: "link@example.com")
                let codeForExisting = try await EmailLinkTests.sendLink(api, to: "link@example.com")
                try await Self.setEmailProvider(api, enabled: passwordRequired, passwordRequired: passwordRequired)
                let refused = try await api.v3("emailLinkSignin", ["email": "link@example.com", "oobCode": .string(code)])
                #expect(refused.errorCode == "OPERATION_NOT_ALLOWED")
                try await Self.setEmailProvider(api, enabled: true)
                #expect(try await api.v3("emailLinkSignin", ["email": "link@example.com", "oobCode": .string(code)]).status == 200)
                try await Self.setEmailProvider(api, enabled: passwordRequired, passwordRequired: passwordRequired)
                let existing = try await api.v3("emailLinkSignin", ["email": "link@example.com", "oobCode": .string(codeForExisting)])
                #expect(existing.errorCode == "OPERATION_NOT_ALLOWED")
            }
        }
    }
}
