import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import NIOCore
import Testing

@Suite("sessions: refresh, revocation, disable, delete")
struct SessionTests {
    @Test("refresh with iOS JSON and web form bodies keeps the sign-in provider")
    func refresh() async throws {
        try await APIHarness.run { _, api in
            let created = try await api.signUp(email: "refresh@example.com")
            let refreshToken = try #require(created.string("refreshToken"))
            let viaJSON = try await api.refresh(refreshToken)
            #expect(viaJSON.status == 200)
            #expect(viaJSON.string("access_token") == viaJSON.string("id_token"))
            #expect(viaJSON.string("expires_in") == "3600")
            #expect(viaJSON.string("user_id") == created.string("localId"))
            #expect(claims(viaJSON.string("id_token"))["firebase"]?["sign_in_provider"]?.stringValue == "password")

            let form = "grant_type=refresh_token&refresh_token=" + refreshToken
            let viaForm = try await api.send(
                .post, "/securetoken.googleapis.com/v1/token?key=k", body: .init(string: form),
                headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(viaForm.status == 200)
            #expect(viaForm.string("user_id") == created.string("localId"))

            let garbage = try await api.refresh("this-is-not-a-refresh-token")
            #expect(garbage.status == 400)
            #expect(garbage.errorCode == "INVALID_REFRESH_TOKEN")
            let noGrant = try await api.post("/securetoken.googleapis.com/v1/token?key=k", ["refreshToken": "x"])
            #expect(noGrant.errorCode == "MISSING_GRANT_TYPE")
        }
    }

    @Test("admin revocation (validSince) ends earlier ID and refresh tokens, to the second")
    func revocation() async throws {
        try await APIHarness.run { harness, api in
            let created = try await api.signUp(email: "revoke@example.com")
            let uid = try #require(created.string("localId"))
            harness.clock.advance(milliseconds: 2000)
            let revokedAt = harness.clock.now() / 1000
            let revoked = try await api.admin("accounts:update", ["localId": .string(uid), "validSince": .int(revokedAt)])
            #expect(revoked.status == 200)
            #expect(try await api.lookup(try #require(created.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(try #require(created.string("refreshToken"))).status == 400)
            let again = try await api.v3("verifyPassword", ["email": "revoke@example.com", "password": "correct-horse-42"])
            #expect(try await api.lookup(try #require(again.string("idToken"))).status == 200)
            #expect(try await api.refresh(try #require(again.string("refreshToken"))).status == 200)
        }
    }

    @Test("a v1 refresh token (from before tokens named their account) still refreshes, rebuilds, and ends on revocation")
    func legacyRefreshToken() async throws {
        try await APIHarness.run { harness, api in
            let created = try await api.signUp(email: "legacy@example.com")
            let uid = try #require(created.string("localId").flatMap { UserID($0) })
            let secret = Base64URL.encode([UInt8](repeating: 9, count: 32))
            let legacy = RefreshToken(text: "1." + Base64URL.encode(Array("password".utf8)) + "." + secret)
            // Recorded as an older Hearth did: a v1 event, no uid in the token.
            let store = harness.context.store
            let issued = RefreshTokenIssued(tokenHash: legacy.hash, namesAccount: false)
            let recorded = try store.appendAsRecorded(
                [.refreshTokenIssued(issued)], to: .account(APIHarness.project, uid), at: harness.clock.now())
            #expect(recorded.map(\.type) == [.refreshTokenIssuedV1])
            let refreshed = try await api.refresh(legacy.text)
            #expect(refreshed.status == 200)
            #expect(refreshed.string("user_id") == uid.rawValue)
            // The token-hash index the v1 token needs comes back from a rebuild, byte for byte.
            let live = try store.maintenance.digest()
            try store.maintenance.rebuild()
            #expect(try store.maintenance.digest() == live)
            #expect(try await api.refresh(legacy.text).status == 200)

            harness.clock.advance(milliseconds: 2000)
            let revoked = try await api.admin(
                "accounts:update", ["localId": .string(uid.rawValue), "validSince": .int(harness.clock.now() / 1000)])
            #expect(revoked.status == 200)
            // A v1 token carries no tag: revoked, it is told from no guessed one. Today's answers
            // as Firebase does: the session's token has expired.
            #expect(try await api.refresh(legacy.text).errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await api.refresh(try #require(created.string("refreshToken"))).errorCode == "TOKEN_EXPIRED")
        }
    }

    @Test("a refresh token names its account: a forged one for a real uid is just unknown, even for a disabled or deleted account")
    func forgedRefreshToken() async throws {
        try await APIHarness.run { harness, api in
            // Made as the daemon starts, before any sign-in tags a token with it.
            #expect(FileManager.default.fileExists(atPath: harness.context.store.directory.secretsKeyFile))
            let created = try await api.signUp(email: "forged@example.com")
            let uid = try #require(created.string("localId").flatMap { UserID($0) })
            // Made as the daemon makes them, but by a forger without its secrets key.
            let forgersDirectory = TemporaryDirectory("forger")
            let forger = SecretSealer(keyFile: forgersDirectory.path + "/secrets.key")
            let forged = try TokenIssuer.newRefreshToken(for: uid, method: .password, signedInAt: 0, secrets: forger).text
            #expect(try await api.refresh(forged).errorCode == "INVALID_REFRESH_TOKEN")
            let disabled = try await api.admin("accounts:update", ["localId": .string(uid.rawValue), "disableUser": true])
            #expect(disabled.status == 200)
            #expect(try await api.refresh(forged).errorCode == "INVALID_REFRESH_TOKEN")
            let issued = try #require(created.string("refreshToken"))
            #expect(try await api.refresh(issued).errorCode == "USER_DISABLED")
            #expect(try await api.admin("accounts:delete", ["localId": .string(uid.rawValue)]).status == 200)
            #expect(try await api.refresh(forged).errorCode == "INVALID_REFRESH_TOKEN")
            // The daemon's own token, its account gone: as Firebase answers.
            #expect(try await api.refresh(issued).errorCode == "USER_NOT_FOUND")
        }
    }

    @Test("a password change revokes other sessions and hands the caller fresh tokens")
    func passwordChange() async throws {
        try await APIHarness.run { harness, api in
            let created = try await api.signUp(email: "change@example.com")
            harness.clock.advance(milliseconds: 2000)
            let changed = try await api.v3(
                "setAccountInfo", ["idToken": created["idToken"] ?? .null, "password": "another-horse-43"])
            #expect(changed.status == 200)
            let fresh = try #require(changed.string("idToken"))
            #expect(try await api.lookup(fresh).status == 200)
            #expect(try await api.lookup(try #require(created.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(try #require(created.string("refreshToken"))).status == 400)
            let old = try await api.v3("verifyPassword", ["email": "change@example.com", "password": "correct-horse-42"])
            #expect(old.errorCode == "INVALID_PASSWORD")
        }
    }

    @Test("a disabled user cannot sign in, refresh or use its ID token; enabling lets it sign in again, not revive old sessions")
    func disabled() async throws {
        try await APIHarness.run { harness, api in
            let created = try await api.signUp(email: "off@example.com")
            let uid = try #require(created.string("localId"))
            harness.clock.advance(milliseconds: 1500)
            #expect(try await api.admin("accounts:update", ["localId": .string(uid), "disableUser": true]).status == 200)
            #expect(
                try await api.v3("verifyPassword", ["email": "off@example.com", "password": "correct-horse-42"]).errorCode
                    == "USER_DISABLED")
            #expect(try await api.refresh(try #require(created.string("refreshToken"))).errorCode == "USER_DISABLED")
            #expect(try await api.lookup(try #require(created.string("idToken"))).errorCode == "USER_DISABLED")
            #expect(try await api.admin("accounts:update", ["localId": .string(uid), "disableUser": false]).status == 200)
            #expect(try harness.eventTypes(of: uid).suffix(3) == ["account.disabled", "account.enabled", "account.sessions_revoked"])
            #expect(try await api.lookup(try #require(created.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(try #require(created.string("refreshToken"))).status == 400)
            let again = try await api.v3(
                "verifyPassword", ["email": "off@example.com", "password": "correct-horse-42", "returnSecureToken": true])
            #expect(try await api.lookup(try #require(again.string("idToken"))).status == 200)
        }
    }

    @Test("deleteAccount: the uid, its tokens and its email are gone")
    func delete() async throws {
        try await APIHarness.run { _, api in
            let created = try await api.signUp(email: "gone@example.com")
            let deleted = try await api.v3("deleteAccount", ["idToken": created["idToken"] ?? .null])
            #expect(deleted.string("kind") == "identitytoolkit#DeleteAccountResponse")
            #expect(try await api.lookup(try #require(created.string("idToken"))).errorCode == "USER_NOT_FOUND")
            #expect(try await api.refresh(try #require(created.string("refreshToken"))).status == 400)
            #expect(try await api.signUp(email: "gone@example.com").status == 200)
        }
    }

    @Test("profile updates, deleteAttribute and unlinking the password")
    func profile() async throws {
        try await APIHarness.run { _, api in
            let created = try await api.signUp(email: "profile@example.com")
            let idToken = created["idToken"] ?? .null
            let named = try await api.v3("setAccountInfo", ["idToken": idToken, "displayName": "Ada", "photoUrl": "https://p/a.png"])
            #expect(named.string("displayName") == "Ada")
            #expect(named.string("idToken") == nil)
            let cleared = try await api.v3("setAccountInfo", ["idToken": idToken, "deleteAttribute": ["DISPLAY_NAME"]])
            #expect(cleared["displayName"] == nil)
            #expect(cleared.string("photoUrl") == "https://p/a.png")
            let unlinked = try await api.v3("setAccountInfo", ["idToken": idToken, "deleteProvider": ["password"]])
            #expect(unlinked["providerUserInfo"] == [])
            #expect(unlinked["passwordHash"] == nil)
            let claimsByUser = try await api.v3("setAccountInfo", ["idToken": idToken, "customAttributes": "{}"])
            #expect(claimsByUser.errorCode == "INSUFFICIENT_PERMISSION")
            #expect(try await api.v3("setAccountInfo", ["displayName": "x"]).errorCode == "INVALID_REQ_TYPE")
        }
    }
}
