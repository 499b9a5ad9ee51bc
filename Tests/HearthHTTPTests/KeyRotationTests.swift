import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

/// `hearth keys rotate` through the API: the new key is in the JWKS before it signs anything,
/// signs after the overlap, and the old one leaves the JWKS once its tokens have expired; tokens
/// signed by either verify throughout. Each step is an event.
@Suite("signing-key rotation: POST /hearth/v1/keys/rotate")
struct KeyRotationTests {
    static func jwks(_ api: APIClient) async throws -> [String] {
        let reply = try await api.send(.get, "/.well-known/jwks.json", body: nil, headers: [:])
        return reply.json["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } ?? []
    }

    static func kid(_ token: String?) -> String? { token.flatMap { JWT.decode($0)?.header["kid"]?.stringValue } }

    @Test("publish, then sign after the overlap, then withdraw the old key after the retirement period; every token verifies meanwhile")
    func rotation() async throws {
        try await APIHarness.run { harness, api in
            let original = try #require(try await Self.jwks(api).first)
            let before = try await api.signUp(email: "before@example.com")
            let oldToken = try #require(before.string("idToken"))
            #expect(Self.kid(oldToken) == original)

            let rotated = try await api.post(
                "/hearth/v1/keys/rotate", ["overlapSeconds": 600, "retireAfterSeconds": 3900], headers: APIClient.admin)
            #expect(rotated.status == 200)
            let newKey = try #require(rotated.string("keyId"))
            #expect(rotated.string("replaces") == original && newKey != original)
            // Published at once, not yet signing: a verifier that fetches the JWKS now knows it first.
            #expect(try await Self.jwks(api) == [original, newKey])
            let during = try await api.signUp(email: "during@example.com")
            #expect(Self.kid(during.string("idToken")) == original)
            // One rotation at a time.
            let second = try await api.post("/hearth/v1/keys/rotate", [:], headers: APIClient.admin)
            #expect(second.status == 400 && second.errorCode == "ROTATION_UNDER_WAY")

            // Not due yet: nothing recorded.
            harness.clock.advance(milliseconds: 599_000)
            try await harness.services.keys.recordDueSteps()
            #expect(Self.kid(try await api.signUp(email: "still-old@example.com").string("idToken")) == original)

            harness.clock.advance(milliseconds: 1_000)
            try await harness.services.keys.recordDueSteps()
            let after = try await api.signUp(email: "after@example.com")
            let newToken = try #require(after.string("idToken"))
            #expect(Self.kid(newToken) == newKey)
            #expect(try await Self.jwks(api) == [newKey, original])
            // The old key's tokens still verify, and the new key's.
            #expect(try await api.lookup(oldToken).status == 200)
            #expect(try await api.lookup(newToken).status == 200)
            // A refresh signs with the new key.
            let refreshed = try await api.refresh(try #require(before.string("refreshToken")))
            #expect(Self.kid(refreshed.json["id_token"]?.stringValue) == newKey)

            harness.clock.advance(milliseconds: 3_900_000)
            try await harness.services.keys.recordDueSteps()
            #expect(try await Self.jwks(api) == [newKey])
            // (Every token the old key signed has expired by now; the new key's verify.)
            let later = try #require(try await api.signUp(email: "later@example.com").string("idToken"))
            #expect(Self.kid(later) == newKey)
            #expect(try await api.lookup(later).status == 200)

            let events = try harness.context.store.audit.events(of: .cluster(.signingKeys))
            #expect(events.map(\.type) == [.signingKeyPublished, .signingKeyActivated, .signingKeyWithdrawn])
            #expect(events[0].metadata.actor == .admin && events[0].metadata.actorId == "owner")
            #expect(events[1].metadata.actor == .scheduler)
            #expect(events[2].payload == .signingKeyWithdrawn(SigningKeyStep(keyId: original)))

            // The next rotation replaces the new key at once (as for a key that leaked): its
            // tokens stop verifying, even one verified before, and its file is removed.
            #expect(try await api.lookup(later).status == 200)
            let next = try await api.post(
                "/hearth/v1/keys/rotate", ["overlapSeconds": 0, "retireAfterSeconds": 0], headers: APIClient.admin)
            let third = try #require(next.string("keyId"))
            #expect(next.string("replaces") == newKey)
            try await harness.services.keys.recordDueSteps()
            harness.clock.advance(milliseconds: 1)
            try await harness.services.keys.recordDueSteps()
            #expect(try await Self.jwks(api) == [third])
            #expect(try await api.lookup(later).errorCode == "INVALID_ID_TOKEN")
            let directory = harness.context.store.directory
            #expect(FileManager.default.fileExists(atPath: directory.signingKeyFile(keyID: third)))
            #expect(!FileManager.default.fileExists(atPath: directory.signingKeyFile(keyID: newKey)))
        }
    }

    @Test("refused: a caller without the operator's credential, periods out of range; the status needs the operator too")
    func refusals() async throws {
        try await APIHarness.run { _, api in
            let asUser = try await api.post("/hearth/v1/keys/rotate", [:], headers: APIClient.json)
            #expect(asUser.status == 401)
            for body: JSONValue in [["overlapSeconds": -1], ["retireAfterSeconds": 2_592_001], ["overlapSeconds": "soon"]] {
                let refused = try await api.post("/hearth/v1/keys/rotate", body, headers: APIClient.admin)
                #expect(refused.status == 400 && refused["error"]?["status"] == "INVALID_ARGUMENT", "\(body)")
            }
            #expect(try await Self.jwks(api).count == 1)
            #expect(try await api.send(.get, "/hearth/v1/keys", body: nil, headers: [:]).status == 401)
            let status = try await api.send(.get, "/hearth/v1/keys", body: nil, headers: APIClient.admin)
            #expect(status.status == 200 && status.json["published"]?.arrayValue?.count == 1)
        }
    }
}
