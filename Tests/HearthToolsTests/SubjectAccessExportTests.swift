import Foundation
import HearthDomain
import HearthTesting
import HearthWire
import Testing

@testable import HearthTools

/// `hearth users export --uid U --history`: one person's account, its history, and the action
/// codes issued for them, personal data opened while the account lives.
@Suite("users export: a subject-access request")
struct SubjectAccessExportTests {
    static let project = TestStore.project
    let directory = TemporaryDirectory("access")

    func issue(_ test: TestStore, _ hash: String, for uid: String?, email: String) throws {
        try test.run(
            .issueOOBCode(
                Self.project, codeHash: hash,
                OOBCodeIssued(requestType: .passwordReset, email: email, uid: uid.map { UserID($0)! }, expiresAt: .max)))
    }

    func export(_ test: TestStore, _ uid: String) throws -> (json: JSONValue, text: String) {
        let path = directory.path + "/\(uid)-\(UUID().uuidString).json"
        _ = try UsersExport.writeHistory(test.store, project: Self.project, uid: UserID(uid)!, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return (try #require(JSONValue.parse(Array(text.utf8))), text)
    }

    @Test func theCodesIssuedForThePersonAreInTheirExportAndNoOneElses() throws {
        let test = try TestStore(label: "access")
        defer { try? test.close() }
        for (uid, email) in [("alice", "alice@access.example"), ("bob", "bob@access.example")] {
            try test.run(.createAccount(Self.project, UserID(uid)!, AccountCreated(method: .password, createdAt: 1, email: email)))
        }
        try issue(test, "a1", for: "alice", email: "alice@access.example")
        try issue(test, "b1", for: "bob", email: "bob@access.example")
        try issue(test, "a2", for: "alice", email: "alice@access.example")
        try issue(test, "n1", for: nil, email: "someone@access.example")
        try test.run(.consumeOOBCode(Self.project, codeHash: "a1"))

        let (alice, text) = try export(test, "alice")
        let codes = try #require(alice["actionCodes"]?.arrayValue)
        #expect(
            codes.compactMap { $0["stream"]?.stringValue } == [
                "oob/\(Self.project)/a1", "oob/\(Self.project)/a1", "oob/\(Self.project)/a2",
            ])
        #expect(codes.compactMap { $0["type"]?.stringValue } == ["oob_code.issued", "oob_code.consumed", "oob_code.issued"])
        #expect(codes.last?["payload"]?["email"]?.stringValue == "alice@access.example")
        #expect(alice["events"]?.arrayValue?.count == 1)
        #expect(!text.contains("bob@access.example") && !text.contains("someone@access.example"))

        // Once the account is deleted, its codes are still listed, their addresses erased with it.
        try test.run(.deleteAccount(Self.project, UserID("alice")!, by: .user))
        let (gone, goneText) = try export(test, "alice")
        #expect(gone["actionCodes"]?.arrayValue?.count == 3)
        #expect(gone["user"] == .null && !goneText.contains("alice@access.example"))
    }

    /// A project's export lists the live accounts only: one deleted by its user, one deleted in
    /// a batch and one erased by an admin are in it neither by uid nor by any personal field.
    @Test func aProjectsExportLeavesEveryErasedAccountOut() throws {
        let test = try TestStore(label: "export-erased")
        defer { try? test.close() }
        for (index, uid) in ["alice", "bob", "carol", "dave"].enumerated() {
            let created = AccountCreated(
                method: .password, createdAt: 1, email: "\(uid)@export.example", displayName: "Name of \(uid)",
                phoneNumber: "+1555000010\(index)")
            try test.run(.createAccount(Self.project, UserID(uid)!, created))
        }
        try test.run(.deleteAccount(Self.project, UserID("bob")!, by: .user))
        try test.run(.batchDeleteAccount(Self.project, UserID("carol")!, force: true), as: TestStore.admin)
        try test.run(.eraseAccount(Self.project, UserID("dave")!, reason: "request 42"), as: TestStore.admin)

        let path = directory.path + "/project.json"
        let summary = try UsersExport.write(test.store, project: Self.project, to: path)
        #expect(summary.users == 1)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let users = try #require(JSONValue.parse(Array(text.utf8))?["users"]?.arrayValue)
        #expect(users.compactMap { $0["localId"]?.stringValue } == ["alice"])
        for gone in ["bob", "carol", "dave"] {
            #expect(!text.contains("\"\(gone)\"") && !text.contains("\(gone)@export.example") && !text.contains("Name of \(gone)"))
        }
    }
}
