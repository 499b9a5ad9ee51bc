import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

@Suite("erasure on request: POST /hearth/v1/projects/{p}/accounts/{uid}/erase")
struct ErasureTests {
    static let erase = "/hearth/v1/projects/demo-hearth/accounts/"

    @Test("an admin erases an account: it ends, its history keeps its shape, its personal data reads as erased")
    func anAdminErasesAnAccount() async throws {
        try await APIHarness.run { harness, api in
            let created = try await api.signUp(email: "erase-me@example.com")
            let uid = try #require(created.string("localId"))
            _ = try await api.admin("accounts:update", ["localId": .string(uid), "displayName": "Erin Erasable"])
            let erased = try await api.post(Self.erase + uid + "/erase", ["reason": "ticket 4711"], headers: APIClient.admin)
            #expect(erased.status == 200)
            #expect(erased["erased"] == true && erased.string("localId") == uid && erased["plainTextHistoryRemains"] == false)

            let lookup = try await api.admin("accounts:lookup", ["localId": [.string(uid)]])
            #expect(lookup["users"] == nil)
            let signIn = try await api.v3("verifyPassword", ["email": "erase-me@example.com", "password": "correct-horse-42"])
            #expect(signIn.errorCode == "EMAIL_NOT_FOUND")

            let events = try harness.context.store.audit.events(of: .account(APIHarness.project, UserID(uid)!))
            let last = try #require(events.last)
            #expect(last.type == .accountErased)
            #expect(last.payload == .accountErased(AccountErased(reason: "ticket 4711")))
            #expect(last.metadata.actor == .admin && last.metadata.actorId == "owner" && last.metadata.clientIp == nil)
            // Every earlier event that held personal data (here: no client address) reads as erased.
            #expect(events.dropLast().allSatisfy { $0.isErased || PersonalData.fields(of: $0.type).isEmpty })
            #expect(events.first?.isErased == true)
            let lines = try events.map { try $0.jsonLine() }.joined(separator: "\n")
            #expect(!lines.contains("erase-me@example.com") && !lines.contains("Erin Erasable"))
            #expect(
                lines.contains(
                    #""erased":["email","password","displayName","photoUrl","phoneNumber","providers","customClaims","metadata.clientIp"]"#)
            )
            #expect(try harness.context.store.audit.verify().isIntact)
        }
    }

    @Test("refused: no reason, a reason too long or on several lines, an unknown account, a caller who is not an admin")
    func refusals() async throws {
        try await APIHarness.run { _, api in
            let uid = try #require(try await api.signUp(email: "keep@example.com").string("localId"))
            let path = Self.erase + uid + "/erase"
            let long = JSONValue.string(String(repeating: "x", count: AccountErased.maxReasonLength + 1))
            for body: JSONValue in [[:], ["reason": "  "], ["reason": long], ["reason": "two\nlines"], ["reason": true]] {
                let refused = try await api.post(path, body, headers: APIClient.admin)
                #expect(refused.status == 400 && refused["error"]?["status"] == "INVALID_ARGUMENT", "\(body)")
            }
            #expect(
                try await api.post(Self.erase + "nobody/erase", ["reason": "r"], headers: APIClient.admin).errorCode == "USER_NOT_FOUND")
            let asUser = try await api.post(path, ["reason": "r"], headers: APIClient.json)
            #expect(asUser.errorCode == "INSUFFICIENT_PERMISSION")
            let lookup = try await api.admin("accounts:lookup", ["localId": [.string(uid)]])
            #expect(lookup["users"]?.arrayValue?.count == 1)
        }
    }
}
