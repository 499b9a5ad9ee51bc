import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthStore
import HearthTesting
import HearthWire
import NIOCore
import Synchronization
import Testing

/// Email enumeration protection (`emailPrivacyConfig.enableImprovedEmailPrivacy`): nothing an
/// app can call says whether an address is registered.
@Suite("email enumeration protection")
struct EmailPrivacyTests {
    static func protect(_ api: APIClient, _ on: Bool = true) async throws {
        let patched = try await api.send(
            .patch,
            "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config?updateMask=emailPrivacyConfig.enableImprovedEmailPrivacy",
            body: ByteBuffer(bytes: JSONValue.object(["emailPrivacyConfig": ["enableImprovedEmailPrivacy": .bool(on)]]).encoded()),
            headers: APIClient.admin)
        #expect(patched.status == 200)
    }

    static func outboxCount(_ api: APIClient) async throws -> Int {
        let listed = try await api.send(.get, "/emulator/v1/projects/demo-hearth/oobCodes", body: nil, headers: [:])
        return listed["oobCodes"]?.arrayValue?.count ?? 0
    }

    /// The outbox once it holds `count` links (a protected reset is recorded after its answer).
    static func outbox(_ api: APIClient, reaches count: Int) async throws -> Int {
        for _ in 0..<500 {
            let listed = try await outboxCount(api)
            if listed >= count { return listed }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await outboxCount(api)
    }

    @Test("a protected reset answers before the code's durable write, so its timing says nothing; the link follows the commit")
    func answersBeforeTheWrite() async throws {
        try await APIHarness.run { harness, api in
            _ = try await api.signUp(email: "known@example.com")
            try await Self.protect(api)
            let store = harness.context.store
            let before = try await Self.outboxCount(api)
            // The writer is busy for six seconds: a reset that waited for its write would wait too.
            let writerBusy = Atomic<Bool>(false)
            let writerFreed = Atomic<Bool>(false)
            let busy = Task {
                try await store.transaction(metadata: TestStore.admin) { _ in
                    writerBusy.store(true, ordering: .sequentiallyConsistent)
                    Thread.sleep(forTimeInterval: 6)
                    writerFreed.store(true, ordering: .sequentiallyConsistent)
                }
            }
            while !writerBusy.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
            let started = ContinuousClock.now
            let known = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "known@example.com"])
            let unknown = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            let answered = ContinuousClock.now - started
            let answeredWhileBusy = !writerFreed.load(ordering: .sequentiallyConsistent)
            let outboxMeanwhile = try await Self.outboxCount(api)
            let stillBusy = !writerFreed.load(ordering: .sequentiallyConsistent)
            #expect(known.status == 200 && unknown.status == 200)
            #expect(answeredWhileBusy, "answered in \(answered), only once the writer was free")
            #expect(outboxMeanwhile == before || !stillBusy)
            try await busy.value
            #expect(try await Self.outbox(api, reaches: before + 1) == before + 1)

            // Without protection the answer is the write's: it waits for the writer.
            try await Self.protect(api, false)
            let busyAgain = Atomic<Bool>(false)
            let freedAgain = Atomic<Bool>(false)
            let again = Task {
                try await store.transaction(metadata: TestStore.admin) { _ in
                    busyAgain.store(true, ordering: .sequentiallyConsistent)
                    Thread.sleep(forTimeInterval: 1)
                    freedAgain.store(true, ordering: .sequentiallyConsistent)
                }
            }
            while !busyAgain.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
            #expect(try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "known@example.com"]).status == 200)
            let waitedForTheWriter = freedAgain.load(ordering: .sequentiallyConsistent)
            #expect(waitedForTheWriter)
            try await again.value
        }
    }

    @Test("createAuthUri, password sign-in and password reset answer alike for known and unknown addresses; admins still learn")
    func protectsEveryAnswer() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "known@example.com")
            _ = try await api.admin("accounts", ["email": "nopassword@example.com"])
            let lookup: (String) async throws -> Reply = { email in
                try await api.v1("createAuthUri", ["identifier": .string(email), "continueUri": "http://localhost/"])
            }
            // Off by default in development, as in the emulator.
            #expect(try await lookup("known@example.com")["registered"] == true)
            try await Self.protect(api)

            let known = try await lookup("known@example.com")
            let unknown = try await lookup("nobody@example.com")
            #expect(Set(known.json.objectValue?.keys ?? [:].keys) == ["kind", "sessionId"])
            #expect(Set(unknown.json.objectValue?.keys ?? [:].keys) == ["kind", "sessionId"])

            // One answer, after one password check, whichever part was wrong.
            let hasher = harness.context.passwords
            for (email, password) in [
                ("nobody@example.com", "whatever-123"), ("nopassword@example.com", "whatever-123"), ("known@example.com", "wrong-pass-1"),
            ] {
                let before = hasher.started
                let refused = try await api.v1("signInWithPassword", ["email": .string(email), "password": .string(password)])
                #expect(refused.errorCode == "INVALID_LOGIN_CREDENTIALS", "\(email)")
                #expect(hasher.started == before + 1, "\(email): one password check")
            }
            #expect(try await api.v1("signInWithPassword", ["email": "known@example.com", "password": "correct-horse-42"]).status == 200)

            // A reset for an unknown address: the same answer, nothing recorded or sent.
            let sentBefore = try await Self.outboxCount(api)
            let resetUnknown = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "Nobody@Example.com"])
            #expect(resetUnknown.status == 200 && resetUnknown.string("email") == "nobody@example.com")
            #expect(try await Self.outboxCount(api) == sentBefore)
            let resetKnown = try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "known@example.com"])
            #expect(Set(resetKnown.json.objectValue?.keys ?? [:].keys) == Set(resetUnknown.json.objectValue?.keys ?? [:].keys))
            #expect(try await Self.outbox(api, reaches: sentBefore + 1) == sentBefore + 1)

            // Verify-before-change to a taken address says nothing either; a direct change is refused.
            let idToken = try #require(user["idToken"])
            let taken = try await api.v1(
                "sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "nopassword@example.com"])
            #expect(taken.status == 200)
            #expect(try await Self.outboxCount(api) == sentBefore + 1)
            let direct = try await api.v1("update", ["idToken": idToken, "email": "elsewhere@example.com"])
            #expect(direct.errorCode == "OPERATION_NOT_ALLOWED")

            // The Admin SDK is not an enumeration channel: it still gets the facts.
            let adminReset = try await api.admin(
                "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com", "returnOobLink": true])
            #expect(adminReset.errorCode == "EMAIL_NOT_FOUND")

            try await Self.protect(api, false)
            #expect(
                try await api.v1("signInWithPassword", ["email": "nobody@example.com", "password": "whatever-123"]).errorCode
                    == "EMAIL_NOT_FOUND")
        }
    }

    @Test("production turns protection on for the projects it serves, recorded as the profile's defaults")
    func onByDefaultInProduction() async throws {
        try await APIHarness.run(configure: { configuration in
            configuration.profile = .production
            configuration.projects.apiKeys = ["test-key": "demo-hearth"]
            configuration.secrets.adminTokens = [AdminCredential(token: HeadfulSignInTests.adminToken)]
        }) { harness, api in
            let config = try await api.send(
                .get, "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config", body: nil,
                headers: HeadfulSignInTests.productionAdmin)
            #expect(config["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"] == true)
            let recorded = try harness.context.store.audit.events(of: .project(APIHarness.project))
            #expect(recorded.first?.metadata.actorId == "production defaults")
            _ = try await api.signUp(email: "someone@example.com")
            let methods = try await api.v1("createAuthUri", ["identifier": "someone@example.com", "continueUri": "http://localhost/"])
            #expect(methods["registered"] == nil && methods["signinMethods"] == nil)
        }
    }
}
