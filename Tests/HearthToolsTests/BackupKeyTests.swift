import Foundation
import HearthTesting
import Testing

@testable import HearthTools

@Suite("backup key")
struct BackupKeyTests {
    let directory = TemporaryDirectory("backup-key")

    func key(_ text: String, named name: String = "key") throws -> BackupKey {
        try text.write(toFile: directory.path + "/" + name, atomically: false, encoding: .utf8)
        return try BackupKey(file: directory.path + "/" + name)
    }

    @Test func aKeyAuthenticatesOnlyTheBytesItWasGiven() throws {
        let key = try key("Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5\n")
        let manifest = Array(#"{"format" : 2}"#.utf8)
        let code = key.authenticationCode(for: manifest)
        #expect(key.isValid(code, for: manifest))
        #expect(!key.isValid(code, for: manifest + [0x0a]))
        #expect(!key.isValid(String(code.dropLast()) + (code.hasSuffix("0") ? "1" : "0"), for: manifest))
        #expect(!key.isValid("not hex", for: manifest))
        let other = try self.key("cXV1eGNvcmdlZ3JhdWx0Z2FycGx5Zm9vYmFyYmF6cXV4", named: "other")
        #expect(!other.isValid(code, for: manifest))
        #expect(other.id != key.id && key.id.count == 16)
    }

    @Test func anEditorsNewlineDoesNotChangeTheKeyAndAShortKeyIsRefused() throws {
        let text = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5"
        #expect(try key(text).id == (try key(text + "\r\n", named: "edited")).id)
        #expect(throws: BackupError.badKey(path: directory.path + "/short", reason: "it holds fewer than 32 bytes")) {
            _ = try key(String(repeating: "a", count: 31) + "\n", named: "short")
        }
        #expect(throws: BackupError.self) { _ = try BackupKey(file: directory.path + "/missing") }
    }
}
