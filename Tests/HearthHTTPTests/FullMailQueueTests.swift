import HearthApp
import HearthAuth
import HearthMail
import HearthStore
import HearthWire
import Testing

@Suite("a full mail queue: requests that must send an email are refused before anything is written")
struct FullMailQueueTests {
    @Test("an email change whose recovery notice has no room is refused, as is a link request; failed requests give their room back")
    func refusedUpFront() async throws {
        // The queue's service never runs here, so whatever is queued stays queued: room for one.
        let relay = try SMTPClient(settings: SMTPSettings(host: "127.0.0.1", port: 9, security: .none))
        let mailer = ActionLinkEmailer(queue: MailQueue(client: relay, capacity: 1), from: "auth@example.com")
        try await APIHarness.run(mailer: mailer) { harness, api in
            let first = try await api.signUp(email: "first@example.com")
            let second = try await api.signUp(email: "second@example.com")
            // Requests that fail after taking room give it back.
            #expect(
                try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"]).errorCode
                    == "EMAIL_NOT_FOUND")
            #expect(
                try await api.v1("update", ["idToken": first["idToken"] ?? .null, "email": "second@example.com"]).errorCode
                    == "EMAIL_EXISTS")

            // The one place goes to the notice of this change.
            let changed = try await api.v1("update", ["idToken": first["idToken"] ?? .null, "email": "first-new@example.com"])
            #expect(changed.string("email") == "first-new@example.com")

            let head = try harness.context.store.ledgerHead().sequence
            let refused = try await api.v1("update", ["idToken": second["idToken"] ?? .null, "email": "second-new@example.com"])
            #expect(refused.status == 400)
            #expect(refused.errorCode == "QUOTA_EXCEEDED")
            let reset = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "second@example.com"])
            #expect(reset.errorCode == "QUOTA_EXCEEDED")
            #expect(try harness.context.store.ledgerHead().sequence == head)
            let user = try await api.lookup(try #require(second.string("idToken")))["users"]?.arrayValue?.first
            #expect(user?["email"] == "second@example.com")

            // Changes that send no email go through.
            #expect(try await api.v1("update", ["idToken": second["idToken"] ?? .null, "displayName": "Second"]).status == 200)
        }
    }
}
