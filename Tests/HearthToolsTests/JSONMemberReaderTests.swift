import Foundation
import HearthTesting
import HearthWire
import Testing

@testable import HearthTools

@Suite("users file: streamed reading")
struct JSONMemberReaderTests {
    func items(_ text: String, chunkSize: Int) throws -> [String] {
        let directory = TemporaryDirectory("json-reader")
        let path = directory.path + "/users.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let reader = try JSONMemberReader(path: path, streamed: ["users"], chunkSize: chunkSize)
        var items: [String] = []
        while let item = try reader.next() {
            switch item {
            case .member(let key, let bytes): items.append("\(key)=\(String(decoding: bytes, as: UTF8.self))")
            case .element(_, let bytes): items.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        withExtendedLifetime(directory) {}
        return items
    }

    /// Strings holding brackets, quotes and escapes, values split across every chunk boundary.
    @Test(arguments: [1, 2, 3, 7, 64, 1 << 20])
    func membersAndElementsSurviveAnyChunkBoundary(chunkSize: Int) throws {
        let text = """
             {"hashConfig" : {"hashAlgo":"SCRYPT","rounds":8} ,
            "count": 12, "flag":true, "users":[ {"localId":"a","displayName":"x}]\\"{["},
            {"localId":"b","providerUserInfo":[{"providerId":"google.com"}]} ,{"localId":"c\\\\"}],
            "after": "tail" }
            """
        #expect(
            try items(text, chunkSize: chunkSize) == [
                #"hashConfig={"hashAlgo":"SCRYPT","rounds":8}"#, "count=12", "flag=true",
                #"{"localId":"a","displayName":"x}]\"{["}"#,
                #"{"localId":"b","providerUserInfo":[{"providerId":"google.com"}]}"#, #"{"localId":"c\\"}"#,
                #"after="tail""#,
            ])
    }

    @Test func anEmptyUsersArrayHasNoElements() throws {
        #expect(try items(#"{"users": []}"#, chunkSize: 4) == [])
    }

    @Test(arguments: [
        #"{"users": [{"localId":"a"}"#, #"{"users": [{"localId":"a"},]}"#, #"["users"]"#, #"{"users": [{"a":1}]} x"#,
        #"{"users" [1]}"#, #"{"users": [{"localId":"a}]}"#, "",
    ])
    func malformedFilesAreRefused(text: String) throws {
        #expect(throws: JSONMemberReader.Malformed.self) { _ = try items(text, chunkSize: 3) }
    }
}

@Suite("users file: checks and hash configuration")
struct UsersFileTests {
    @Test func aUserIsMadeABatchCreateUser() throws {
        let user = try UsersImport.transform(
            Array(#"{"localId":"u1","passwordHash":"ab+/","salt":"c/8=","lastSignedInAt":"17","createdAt":"1"}"#.utf8),
            number: 1)
        #expect(user["passwordHash"] == "ab-_")
        #expect(user["salt"] == "c_8")
        #expect(user["lastLoginAt"] == "17")
        #expect(user["lastSignedInAt"] == nil)
    }

    @Test(arguments: [
        (#"{"localId":"u1","lastLoginAt":"1"}"#, "has unsupported keys: lastLoginAt"),
        (#"{"localId":"u1","passwordHash":"%%"}"#, "Password hash should be base64 encoded."),
        (#"{"localId":"u1","providerUserInfo":[{"providerId":"g","uid":"x"}]}"#, "has unsupported keys: uid"),
        (#"{"email":"a@b.c"}"#, "has no localId"),
        (#"[1]"#, "is not a JSON object"),
    ])
    func malformedUsersAreRefusedWithAReason(json: String, reason: String) throws {
        let error = #expect(throws: UsersImport.Invalid.self) { _ = try UsersImport.transform(Array(json.utf8), number: 3) }
        #expect(error?.description.contains(reason) == true)
        #expect(error?.description.hasPrefix("user 3") == true)
    }

    @Test func theFlagsAreCheckedAsFirebaseChecksThem() throws {
        var scrypt = HashConfig(algorithm: "scrypt")
        scrypt.key = [1, 2, 3]
        scrypt.rounds = 9
        scrypt.memoryCost = 14
        let tooMany = #expect(throws: HashConfig.Invalid.self) { try scrypt.validate() }
        #expect(tooMany?.description == "Must provide valid rounds(1..8) for hash algorithm SCRYPT")
        scrypt.rounds = 8
        try scrypt.validate()
        #expect(throws: HashConfig.Invalid.self) { try HashConfig(algorithm: "HMAC_SHA256").validate() }
        #expect(throws: HashConfig.Invalid.self) { try HashConfig(algorithm: "MD5").validate() }
        #expect(throws: HashConfig.Invalid.self) { try HashConfig(algorithm: "ARGON2").validate() }
        // Hearth's exported form reads back as the same configuration.
        #expect(try HashConfig(json: scrypt.json) == scrypt)
        #expect(scrypt.requestFields["hashAlgorithm"] == "SCRYPT")
        #expect(scrypt.requestFields["memoryCost"] == .int(14))
        #expect(scrypt.requestFields["saltSeparator"] == "")
    }
}

@Suite("users file: the first pass")
struct UsersFileCheckTests {
    func check(_ text: String) throws -> UsersImport.Plan {
        let directory = TemporaryDirectory("users-check")
        let path = directory.path + "/users.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return try withExtendedLifetime(directory) { try UsersImport.check(path) }
    }

    @Test func anEmptyProjectsExportIsAFileOfNoUsers() throws {
        #expect(try check(#"{"users": []}"#).users == 0)
        #expect(try check("{\"hashConfig\":{\"hashAlgo\":\"BCRYPT\"},\n\"users\": [\n\n]}\n").users == 0)
    }

    @Test func aFileWithoutUsersIsRefused() throws {
        #expect(throws: UsersImport.Invalid.self) { _ = try check(#"{"accounts": []}"#) }
    }

    @Test func hashConfigurationsAreReadWhereverTheyStand() throws {
        let plan = try check(
            #"{"users": [{"localId":"a","passwordHash":"AAAA","salt":"AA=="},{"localId":"b"}],"#
                + #""otherHashConfigs":[{"hashConfig":{"hashAlgo":"BCRYPT"},"localIds":["a"]}],"#
                + #""hashConfig":{"hashAlgo":"PBKDF2_SHA256","rounds":"1000"}}"#)
        #expect(plan.users == 2 && plan.passwordUsers == 1)
        #expect(plan.hashConfig?.algorithm == "PBKDF2_SHA256" && plan.hashConfig?.rounds == 1000)
        #expect(plan.otherHashConfigs["a"]?.algorithm == "BCRYPT")
    }
}
