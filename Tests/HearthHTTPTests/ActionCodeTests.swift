import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import HummingbirdTesting
import Testing

/// Password reset, email verification and verify-before-change: sendOobCode, resetPassword,
/// update with an oobCode, and the development action page the links point at.
@Suite("email action codes")
struct ActionCodeTests {
    /// The newest outbox entry for `email` of `type`: (code, link).
    static func delivered(_ api: APIClient, to email: String, _ type: String) async throws -> (code: String, link: String) {
        let listed = try await api.send(.get, "/emulator/v1/projects/demo-hearth/oobCodes", body: nil, headers: [:])
        let entry = try #require(
            listed["oobCodes"]?.arrayValue?.last { $0["email"]?.stringValue == email && $0["requestType"]?.stringValue == type })
        return (try #require(entry["oobCode"]?.stringValue), try #require(entry["oobLink"]?.stringValue))
    }

    /// The path and query of an absolute link, for the router tester.
    static func path(of link: String) -> String {
        String(link.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
    }

    @Test("a password reset sets the new password, verifies the email and ends every session")
    func passwordReset() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "reset@example.com")
            #expect(try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET"]).errorCode == "MISSING_EMAIL")
            let unknown = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            #expect(unknown.errorCode == "EMAIL_NOT_FOUND")
            harness.clock.advance(milliseconds: 1500)
            let sent = try await api.v3("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "Reset@Example.com"])
            #expect(sent.status == 200)
            #expect(sent.string("email") == "reset@example.com")
            let (code, link) = try await Self.delivered(api, to: "reset@example.com", "PASSWORD_RESET")
            #expect(link.contains("mode=resetPassword&"))

            // Inspecting changes nothing; a weak password is refused and leaves the code usable.
            let inspected = try await api.v1("resetPassword", ["oobCode": .string(code)])
            #expect(inspected["requestType"] == "PASSWORD_RESET")
            #expect(inspected["email"] == "reset@example.com")
            let weak = try await api.v1("resetPassword", ["oobCode": .string(code), "newPassword": "abc"])
            #expect(weak.errorCode == "WEAK_PASSWORD")
            let reset = try await api.v3("resetPassword", ["oobCode": .string(code), "newPassword": "new-password-7"])
            #expect(reset.status == 200)
            #expect(reset["kind"] == "identitytoolkit#ResetPasswordResponse")
            #expect(
                try await api.v1("resetPassword", ["oobCode": .string(code), "newPassword": "again-8"]).errorCode == "INVALID_OOB_CODE")

            #expect(try await api.lookup(try #require(user.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(try #require(user.string("refreshToken"))).status == 400)
            let old = try await api.v1("signInWithPassword", ["email": "reset@example.com", "password": "correct-horse-42"])
            #expect(old.errorCode == "INVALID_PASSWORD")
            let signedIn = try await api.v1("signInWithPassword", ["email": "reset@example.com", "password": "new-password-7"])
            let account = try await api.lookup(try #require(signedIn.string("idToken")))["users"]?.arrayValue?.first
            #expect(account?["emailVerified"] == true)
            let types = try harness.eventTypes(of: try #require(user.string("localId")))
            #expect(Array(types.suffix(5).prefix(3)) == ["account.password_set", "account.email_verified", "account.sessions_revoked"])

            // Of two links, the older one dies once the newer one has set a password.
            _ = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "reset@example.com"])
            let (older, _) = try await Self.delivered(api, to: "reset@example.com", "PASSWORD_RESET")
            harness.clock.advance(milliseconds: 1500)
            _ = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "reset@example.com"])
            let (newer, _) = try await Self.delivered(api, to: "reset@example.com", "PASSWORD_RESET")
            #expect(older != newer)
            harness.clock.advance(milliseconds: 1500)
            #expect(try await api.v1("resetPassword", ["oobCode": .string(newer), "newPassword": "newest-pass-9"]).status == 200)
            #expect(
                try await api.v1("resetPassword", ["oobCode": .string(older), "newPassword": "stale-pass-10"]).errorCode
                    == "INVALID_OOB_CODE")
        }
    }

    @Test("codes are checked: missing, unknown, expired, or for an address the account has left")
    func codeChecks() async throws {
        try await APIHarness.run { harness, api in
            _ = try await api.signUp(email: "codes@example.com")
            #expect(try await api.v1("resetPassword", [:]).errorCode == "MISSING_OOB_CODE")
            #expect(try await api.v1("resetPassword", ["oobCode": "not-a-code"]).errorCode == "INVALID_OOB_CODE")
            _ = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "codes@example.com"])
            let (expiring, _) = try await Self.delivered(api, to: "codes@example.com", "PASSWORD_RESET")
            harness.clock.advance(milliseconds: 6 * 60 * 60 * 1000 + 1)
            let expired = try await api.v1("resetPassword", ["oobCode": .string(expiring), "newPassword": "later-123"])
            #expect(expired.errorCode == "EXPIRED_OOB_CODE")

            _ = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "codes@example.com"])
            let (stale, _) = try await Self.delivered(api, to: "codes@example.com", "PASSWORD_RESET")
            let signedIn = try await api.v1("signInWithPassword", ["email": "codes@example.com", "password": "correct-horse-42"])
            let moved = try await api.v1("update", ["idToken": signedIn["idToken"] ?? .null, "email": "moved@example.com"])
            #expect(moved.status == 200)
            let refused = try await api.v1("resetPassword", ["oobCode": .string(stale), "newPassword": "hijack-123"])
            #expect(refused.errorCode == "INVALID_OOB_CODE")
            // A reset code is not applied through update, and stays unused.
            _ = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "moved@example.com"])
            let (fresh, _) = try await Self.delivered(api, to: "moved@example.com", "PASSWORD_RESET")
            #expect(try await api.v1("update", ["oobCode": .string(fresh)]).errorCode == "INVALID_OOB_CODE")
            #expect(try await api.v1("resetPassword", ["oobCode": .string(fresh)])["requestType"] == "PASSWORD_RESET")
        }
    }

    @Test("VERIFY_EMAIL: sent for the signed-in user, applied by update, no sessions end")
    func verifyEmail() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "verify@example.com")
            let idToken = try #require(user["idToken"])
            #expect(try await api.v1("sendOobCode", ["requestType": "VERIFY_EMAIL"]).errorCode == "INVALID_ID_TOKEN")
            let anonymous = try await api.v1("signUp")
            let noEmail = try await api.v1("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": anonymous["idToken"] ?? .null])
            #expect(noEmail.errorCode == "MISSING_EMAIL")
            // The body's email is ignored: the code is for the token's user.
            let sent = try await api.v1("sendOobCode", ["requestType": 4, "idToken": idToken, "email": "other@example.com"])
            #expect(sent.string("email") == "verify@example.com")
            #expect(sent["oobCode"] == nil)
            let (code, link) = try await Self.delivered(api, to: "verify@example.com", "VERIFY_EMAIL")
            #expect(link.contains("mode=verifyEmail&"))

            let applied = try await api.v3("setAccountInfo", ["oobCode": .string(code)])
            #expect(applied["emailVerified"] == true)
            #expect(applied["email"] == "verify@example.com")
            #expect(applied["idToken"] == nil)
            #expect(try await api.lookup(try #require(idToken.stringValue))["users"]?.arrayValue?.first?["emailVerified"] == true)
            #expect(try await api.v1("update", ["oobCode": .string(code)]).errorCode == "INVALID_OOB_CODE")
            let types = try harness.eventTypes(of: try #require(user.string("localId")))
            #expect(types.last == "account.email_verified")
        }
    }

    @Test("the Admin SDK generates verification and reset links by email")
    func adminLinks() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.signUp(email: "admin-link@example.com")
            let unknown = try await api.admin(
                "accounts:sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "ghost@example.com", "returnOobLink": true])
            #expect(unknown.errorCode == "USER_NOT_FOUND")
            let link = try await api.admin(
                "accounts:sendOobCode",
                [
                    "requestType": "VERIFY_EMAIL", "email": "admin-link@example.com", "returnOobLink": true,
                    "continueUrl": "https://app.example/done",
                ])
            let oobLink = try #require(link.string("oobLink"))
            #expect(oobLink.contains("oobCode=\(try #require(link.string("oobCode")))"))
            // The link works: the action page verifies and redirects to the continue URL.
            let page = try await api.send(.get, Self.path(of: oobLink), body: nil, headers: [:])
            #expect(page.status == 303)
            let again = try await api.send(.get, Self.path(of: oobLink), body: nil, headers: [:])
            #expect(again.status == 400)
            #expect(again["authEmulator"]?["error"]?.stringValue?.contains("already been used") == true)
            let reset = try await api.admin(
                "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "admin-link@example.com", "returnOobLink": true])
            #expect(reset.string("oobLink")?.contains("mode=resetPassword&") == true)
            let unprivileged = try await api.v1(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "admin-link@example.com", "returnOobLink": true])
            #expect(unprivileged.errorCode == "INSUFFICIENT_PERMISSION")
        }
    }

    @Test("VERIFY_AND_CHANGE_EMAIL moves the account to the new address once that address proves itself")
    func verifyAndChangeEmail() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "before@example.com")
            _ = try await api.signUp(email: "taken@example.com")
            let idToken = try #require(user["idToken"])
            #expect(
                try await api.v1("sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken]).errorCode
                    == "MISSING_NEW_EMAIL")
            #expect(
                try await api.v1("sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "newEmail": "n@example.com"]).errorCode
                    == "MISSING_ID_TOKEN")
            let taken = try await api.v1(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "taken@example.com"])
            #expect(taken.errorCode == "EMAIL_EXISTS")
            let badAddress = try await api.v1(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "no-at-sign"])
            #expect(badAddress.errorCode == "INVALID_NEW_EMAIL")
            harness.clock.advance(milliseconds: 1500)
            let sent = try await api.v1(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "After@example.com"])
            #expect(sent.string("email") == "before@example.com")
            let (code, link) = try await Self.delivered(api, to: "before@example.com", "VERIFY_AND_CHANGE_EMAIL")
            #expect(link.contains("mode=verifyAndChangeEmail&"))
            let inspected = try await api.v1("resetPassword", ["oobCode": .string(code)])
            #expect(inspected["newEmail"] == "after@example.com")
            // Nothing changes until the link is used.
            #expect(try await api.lookup(try #require(idToken.stringValue))["users"]?.arrayValue?.first?["email"] == "before@example.com")

            let page = try await api.send(.get, Self.path(of: link), body: nil, headers: [:])
            #expect(page.status == 200)
            #expect(page["authEmulator"]?["newEmail"] == "after@example.com")
            // The replaced address hears of it, with a link back, as with any change.
            let (_, recover) = try await Self.delivered(api, to: "before@example.com", "RECOVER_EMAIL")
            #expect(recover.contains("mode=recoverEmail&"))
            #expect(try await api.lookup(try #require(idToken.stringValue)).errorCode == "TOKEN_EXPIRED")
            let signedIn = try await api.v1("signInWithPassword", ["email": "after@example.com", "password": "correct-horse-42"])
            let account = try await api.lookup(try #require(signedIn.string("idToken")))["users"]?.arrayValue?.first
            #expect(account?["email"] == "after@example.com")
            #expect(account?["emailVerified"] == true)
            // The old address is free again.
            #expect(try await api.signUp(email: "before@example.com").status == 200)
        }
    }

    @Test("an email change sends the old address a RECOVER_EMAIL link that moves the account back")
    func recoverEmail() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "first@example.com")
            let uid = try #require(user.string("localId"))
            #expect(
                try await api.v1("sendOobCode", ["requestType": "RECOVER_EMAIL", "email": "first@example.com"]).errorCode
                    == "OPERATION_NOT_ALLOWED")
            harness.clock.advance(milliseconds: 1500)
            let changed = try await api.v1("update", ["idToken": user["idToken"] ?? .null, "email": "second@example.com"])
            #expect(changed.string("email") == "second@example.com")
            let (code, link) = try await Self.delivered(api, to: "first@example.com", "RECOVER_EMAIL")
            #expect(link.contains("mode=recoverEmail&"))
            // checkActionCode: the address it restores, and the one it undoes.
            let inspected = try await api.v1("resetPassword", ["oobCode": .string(code)])
            #expect(inspected["requestType"] == "RECOVER_EMAIL")
            #expect(inspected["email"] == "first@example.com")
            #expect(inspected["newEmail"] == "second@example.com")
            #expect(
                try await api.v1("resetPassword", ["oobCode": .string(code), "newPassword": "new-password-1"]).errorCode
                    == "INVALID_OOB_CODE")

            harness.clock.advance(milliseconds: 1500)
            let recovered = try await api.v1("update", ["oobCode": .string(code)])
            #expect(recovered.string("email") == "first@example.com")
            #expect(recovered["emailVerified"] == true)
            #expect(recovered["newEmail"] == nil)
            #expect(try await api.v1("update", ["oobCode": .string(code)]).errorCode == "INVALID_OOB_CODE")
            // A recovery is an email change (it ends the sessions of whoever changed it); no new notice is sent for it.
            let events = try harness.eventTypes(of: uid)
            #expect(events.suffix(2) == ["account.email_changed", "account.sessions_revoked"])
            #expect(events.filter { $0 == "account.email_changed" }.count == 2)
            let listed = try await api.send(.get, "/emulator/v1/projects/demo-hearth/oobCodes", body: nil, headers: [:])
            #expect(listed["oobCodes"]?.arrayValue?.contains { $0["email"] == "second@example.com" } == false)
            let signedIn = try await api.v1("signInWithPassword", ["email": "first@example.com", "password": "correct-horse-42"])
            #expect(signedIn.status == 200)

            // An admin's change notifies too; once someone else holds the old address, it cannot come back.
            let admin = try await api.admin("accounts:update", ["localId": .string(uid), "email": "third@example.com"])
            #expect(admin.string("email") == "third@example.com")
            let (adminCode, adminLink) = try await Self.delivered(api, to: "first@example.com", "RECOVER_EMAIL")
            _ = try await api.signUp(email: "first@example.com")
            #expect(try await api.v1("update", ["oobCode": .string(adminCode)]).errorCode == "EMAIL_EXISTS")
            let page = try await api.send(.get, Self.path(of: adminLink), body: nil, headers: [:])
            #expect(page.status == 400)
        }
    }

    @Test(
        "linking a password with another email (iOS signUp with an idToken) is an email change: the old address is told, old sessions end")
    func linkPasswordReplacingAnEmail() async throws {
        try await APIHarness.run { harness, api in
            let profile: JSONValue = ["sub": "gh-9", "email": "octo@example.com", "email_verified": true]
            let federated = try await api.v1("signInWithIdp", FederatedTests.credential("github.com", profile))
            let uid = try #require(federated.string("localId"))
            harness.clock.advance(milliseconds: 1500)
            let linked = try await api.v1(
                "signUp", ["idToken": federated["idToken"] ?? .null, "email": "octo-new@example.com", "password": "correct-horse-42"])
            #expect(linked.status == 200)
            #expect(linked.string("email") == "octo-new@example.com")
            let (code, _) = try await Self.delivered(api, to: "octo@example.com", "RECOVER_EMAIL")
            #expect(try await api.lookup(try #require(federated.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.lookup(try #require(linked.string("idToken"))).status == 200)
            // The owner of the old address takes the account back.
            harness.clock.advance(milliseconds: 1500)
            #expect(try await api.v1("update", ["oobCode": .string(code)]).string("email") == "octo@example.com")
            #expect(try harness.eventTypes(of: uid).contains("account.sessions_revoked"))
        }
    }

    @Test("the action page restores an email from a recoverEmail link, and only from one")
    func recoverEmailPage() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "page@example.com")
            _ = try await api.v1("update", ["idToken": user["idToken"] ?? .null, "email": "moved@example.com"])
            let (_, link) = try await Self.delivered(api, to: "page@example.com", "RECOVER_EMAIL")
            // A reset code followed as a recovery is refused, and stays usable.
            _ = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "moved@example.com"])
            let (_, resetLink) = try await Self.delivered(api, to: "moved@example.com", "PASSWORD_RESET")
            let mismatched = try await api.send(
                .get, Self.path(of: resetLink).replacingOccurrences(of: "mode=resetPassword", with: "mode=recoverEmail"),
                body: nil, headers: [:])
            #expect(mismatched.status == 400)
            #expect(mismatched["authEmulator"]?["error"] == "Requested mode does not match the OOB code provided.")
            let page = try await api.send(.get, Self.path(of: link), body: nil, headers: [:])
            #expect(page.status == 200)
            #expect(page["authEmulator"]?["email"] == "page@example.com")
            #expect(try await api.send(.get, Self.path(of: link), body: nil, headers: [:]).status == 400)
            #expect(try await api.v1("signInWithPassword", ["email": "page@example.com", "password": "correct-horse-42"]).status == 200)
        }
    }

    @Test("the action page: reset by link, sign-in redirect, and its refusals")
    func actionPage() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.signUp(email: "page@example.com")
            _ = try await api.v1(
                "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "page@example.com", "continueUrl": "http://localhost/after"])
            let (_, link) = try await Self.delivered(api, to: "page@example.com", "PASSWORD_RESET")
            let path = Self.path(of: link)
            let asks = try await api.send(.get, path, body: nil, headers: [:])
            #expect(asks.status == 400)
            #expect(asks["authEmulator"]?["urlTemplate"]?.stringValue?.hasSuffix("&newPassword=NEW_PASSWORD_HERE") == true)
            let weak = try await api.send(.get, path + "&newPassword=abc", body: nil, headers: [:])
            #expect(weak.errorCode == "WEAK_PASSWORD")
            let done = try await api.send(.get, path + "&newPassword=from-the-link-9", body: nil, headers: [:])
            #expect(done.status == 303)
            let signedIn = try await api.v1("signInWithPassword", ["email": "page@example.com", "password": "from-the-link-9"])
            #expect(signedIn.status == 200)
            #expect(try await api.send(.get, path + "&newPassword=twice-over-9", body: nil, headers: [:]).status == 400)

            let signInLink = try await api.admin(
                "accounts:sendOobCode",
                [
                    "requestType": "EMAIL_SIGNIN", "email": "page@example.com", "returnOobLink": true,
                    "continueUrl": "https://app.example/finish?x=1",
                ])
            let response = try await api.client.executeRequest(
                uri: Self.path(of: try #require(signInLink.string("oobLink"))), method: .get, headers: [:], body: nil)
            #expect(response.status == .seeOther)
            let location = try #require(response.headers[.location])
            #expect(location.hasPrefix("https://app.example/finish?"))
            #expect(location.contains("x=1") && location.contains("mode=signIn") && location.contains("oobCode="))

            // A change whose new address was taken meanwhile is the API's EMAIL_EXISTS, not "link used".
            let owner = try await api.v1("signInWithPassword", ["email": "page@example.com", "password": "from-the-link-9"])
            _ = try await api.v1(
                "sendOobCode",
                ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": owner["idToken"] ?? .null, "newEmail": "later@example.com"])
            let (_, change) = try await Self.delivered(api, to: "page@example.com", "VERIFY_AND_CHANGE_EMAIL")
            _ = try await api.signUp(email: "later@example.com")
            #expect(try await api.send(.get, Self.path(of: change), body: nil, headers: [:]).errorCode == "EMAIL_EXISTS")

            #expect(try await api.send(.get, "/emulator/action?oobCode=x", body: nil, headers: [:]).status == 400)
            let mode = try await api.send(.get, "/emulator/action?apiKey=k&oobCode=x&mode=nonsense", body: nil, headers: [:])
            #expect(mode["authEmulator"]?["error"] == "Invalid mode")
        }
    }

    @Test("deleteAttribute EMAIL removes the email and frees it; USER_ATTRIBUTE_NAME_UNSPECIFIED is ignored")
    func deleteEmail() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "gone@example.com")
            let updated = try await api.v1(
                "update", ["idToken": user["idToken"] ?? .null, "deleteAttribute": ["EMAIL", "USER_ATTRIBUTE_NAME_UNSPECIFIED"]])
            #expect(updated.status == 200)
            #expect(updated["email"] == nil)
            let account = try await api.lookup(try #require(user.string("idToken")))["users"]?.arrayValue?.first
            #expect(account?["email"] == nil)
            #expect(account?["emailVerified"] == nil || account?["emailVerified"] == false)
            let methods = try await api.v1("createAuthUri", ["identifier": "gone@example.com", "continueUri": "http://a/"])
            #expect(methods["registered"] == false)
            #expect(try await api.signUp(email: "gone@example.com").status == 200)
        }
    }
}
