import Foundation
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird
import HummingbirdTesting
import Testing

/// Users imported with another system's password hashes sign in with their old passwords, and
/// that first sign-in re-hashes them with Hearth's scrypt (an `account.password_set` event).
/// The expected hashes were computed outside Hearth (Python hashlib, cryptography and bcrypt;
/// the Firebase scrypt one is the example of github.com/firebase/scrypt's README).
@Suite("batchCreate: imported password hashes")
struct ImportedHashTests {
    static func b64(_ text: String) -> JSONValue { .string(Data(text.utf8).base64EncodedString()) }

    /// Imports one user, then checks the wrong and the right password and the re-hash.
    func importAndSignIn(
        _ api: APIClient, _ harness: APIHarness, uid: String, options: [String: JSONValue], hash: JSONValue,
        salt: JSONValue? = nil, password: String
    ) async throws {
        var user: [String: JSONValue] = ["localId": .string(uid), "email": .string("\(uid)@example.com"), "passwordHash": hash]
        if let salt { user["salt"] = salt }
        var body = options
        body["users"] = [.object(user)]
        let imported = try await api.admin("accounts:batchCreate", .object(body))
        #expect(imported.status == 200)
        #expect(imported["error"] == [], "\(uid): \(imported.json)")

        let wrong = try await api.v1("signInWithPassword", ["email": .string("\(uid)@example.com"), "password": "not-it-at-all"])
        #expect(wrong.errorCode == "INVALID_PASSWORD", "\(uid)")
        let right = try await api.v1("signInWithPassword", ["email": .string("\(uid)@example.com"), "password": .string(password)])
        #expect(right.status == 200, "\(uid): \(right.json)")
        #expect(try harness.eventTypes(of: uid).suffix(3) == ["account.password_set", "account.signed_in", "account.refresh_token_issued"])
        let again = try await api.v1("signInWithPassword", ["email": .string("\(uid)@example.com"), "password": .string(password)])
        #expect(again.status == 200, "\(uid): signs in after the re-hash")
    }

    @Test("Firebase's modified scrypt, with signer key and salt separator")
    func firebaseScrypt() async throws {
        try await APIHarness.run { harness, api in
            try await importAndSignIn(
                api, harness, uid: "fb-scrypt",
                options: [
                    "hashAlgorithm": "SCRYPT", "rounds": 8, "memoryCost": 14, "saltSeparator": "Bw==",
                    "signerKey": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
                ],
                hash: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
                salt: "42xEC+ixf3L2lw==", password: "user1password")
        }
    }

    @Test("bcrypt, PBKDF2-SHA256 and HMAC-SHA256 in both input orders")
    func otherAlgorithms() async throws {
        try await APIHarness.run { harness, api in
            try await importAndSignIn(
                api, harness, uid: "bcrypt", options: ["hashAlgorithm": "BCRYPT"],
                hash: Self.b64("$2b$04$xhQDo1nSvMaXqDrLEA8WH.fsDP5DqxFkccf3DNT5hEws6K5XOatAS"), password: "hunter22")
            try await importAndSignIn(
                api, harness, uid: "pbkdf2", options: ["hashAlgorithm": "PBKDF2_SHA256", "rounds": 1000],
                hash: "N49pK4Z1HIYJXYzNgFxkUuiAwfLvHdHCqSk61VMe6l8=", salt: Self.b64("NaCl-salt"), password: "hunter22")
            let hmac: [String: JSONValue] = ["hashAlgorithm": "HMAC_SHA256", "signerKey": Self.b64("signing-key")]
            try await importAndSignIn(
                api, harness, uid: "hmac", options: hmac, hash: "NSXwkURN85QBDixix8ZQxiZ1ylYe6xEChsz1D24aWx4=",
                salt: Self.b64("NaCl-salt"), password: "hunter22")
            try await importAndSignIn(
                api, harness, uid: "hmac-pw-first", options: hmac.merging(["passwordHashOrder": "PASSWORD_AND_SALT"]) { $1 },
                hash: "Cp+lHIbSeQAbjpYyFeXHIfHkUzkvs3v79meFJxMizpk=", salt: Self.b64("NaCl-salt"), password: "hunter22")
        }
    }

    @Test("hash options Hearth cannot use are one clear 400, before any user is imported")
    func badOptions() async throws {
        try await APIHarness.run { _, api in
            let user: JSONValue = ["localId": "x", "email": "x@example.com", "passwordHash": "AAAA"]
            let cases: [([String: JSONValue], String)] = [
                (["hashAlgorithm": "SCRYPT", "rounds": 8, "memoryCost": 14], "MISSING_SIGNER_KEY"),
                (["hashAlgorithm": "SCRYPT", "signerKey": "AAAA", "rounds": 9, "memoryCost": 14], "INVALID_ROUNDS"),
                (["hashAlgorithm": "SCRYPT", "signerKey": "AAAA", "rounds": 8, "memoryCost": 15], "INVALID_MEMORY_COST"),
                (["hashAlgorithm": "SCRYPT", "signerKey": "not base64!", "rounds": 8, "memoryCost": 14], "INVALID_SIGNER_KEY"),
                (["hashAlgorithm": "HMAC_SHA256"], "MISSING_SIGNER_KEY"),
                (["hashAlgorithm": "PBKDF2_SHA256", "rounds": 0], "INVALID_ROUNDS"),
                (["hashAlgorithm": "SHA256", "rounds": 1], "INVALID_HASH_ALGORITHM"),
                (["hashAlgorithm": "BCRYPT", "passwordHashOrder": "SIDEWAYS"], "INVALID_PASSWORD_HASH_ORDER"),
                // scrypt parameters that would trap in swift-crypto, or hold a hashing thread for ever.
                (["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 0, "blockSize": 8, "parallelization": 1], "INVALID_MEMORY_COST"),
                (["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 3000, "blockSize": 8, "parallelization": 1], "INVALID_MEMORY_COST"),
                (
                    ["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 1_048_576, "blockSize": 8, "parallelization": 1],
                    "INVALID_MEMORY_COST"
                ),
                (["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 16384, "blockSize": -1, "parallelization": 1], "INVALID_BLOCK_SIZE"),
                (
                    ["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 16384, "blockSize": 1_099_511_627_776, "parallelization": 1],
                    "INVALID_BLOCK_SIZE"
                ),
                (
                    ["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 16384, "blockSize": 8, "parallelization": 134_217_728],
                    "INVALID_PARALLELIZATION"
                ),
                (["hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 16384, "parallelization": 1], "INVALID_BLOCK_SIZE"),
            ]
            for (options, code) in cases {
                var body = options
                body["users"] = [user]
                let reply = try await api.admin("accounts:batchCreate", .object(body))
                #expect(reply.status == 400, "\(options)")
                #expect(reply.errorCode == code, "\(options): \(reply.json)")
            }
            let lookup = try await api.admin("accounts:lookup", ["localId": ["x"]])
            #expect(lookup["users"] == nil)
            // Hashes no sign-in could check, or that would match any password (an empty derived
            // key equals an empty hash), fail their user; the others in the batch import.
            let scrypt: [String: JSONValue] = [
                "hashAlgorithm": "STANDARD_SCRYPT", "cpuMemCost": 1024, "blockSize": 8, "parallelization": 1,
            ]
            let odd: [(options: [String: JSONValue], hash: String)] = [
                (["hashAlgorithm": "BCRYPT"], "AAAA"),
                (["hashAlgorithm": "BCRYPT"], Base64URL.encode(Array("$2b$31$".utf8) + Array(repeating: UInt8(ascii: "a"), count: 53))),
                (scrypt, ""),
                (scrypt.merging(["dkLen": 32]) { $1 }, Base64URL.encode(Array(repeating: 7, count: 16))),
                (["hashAlgorithm": "SCRYPT", "signerKey": "", "rounds": 8, "memoryCost": 14], ""),
                (["hashAlgorithm": "HMAC_SHA256", "signerKey": "a2V5"], "AAAA"),
                (["hashAlgorithm": "PBKDF2_SHA256", "rounds": 1000], Base64URL.encode(Array(repeating: 1, count: 750))),
            ]
            for (index, (options, hash)) in odd.enumerated() {
                var body = options
                body["users"] = [
                    ["localId": "odd", "email": "odd@example.com", "passwordHash": .string(hash)],
                    ["localId": .string("fine\(index)"), "email": .string("fine\(index)@example.com")],
                ]
                let reply = try await api.admin("accounts:batchCreate", .object(body))
                #expect(reply.status == 200)
                #expect(reply["error"]?.arrayValue?.count == 1, "\(options) \(hash): \(reply.json)")
                #expect(reply["error"]?.arrayValue?.first?["index"] == 0)
                #expect(
                    try await api.v1("signInWithPassword", ["email": "odd@example.com", "password": "whatever1"]).errorCode
                        == "EMAIL_NOT_FOUND")
            }
        }
    }
}
