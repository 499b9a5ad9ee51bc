import Foundation
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import Testing

/// The leader's due rotation steps when it lacks the pending key's file: they wait while another
/// node may hold it, and the rotation is abandoned once none can.
@Suite("signing keys: a due activation without the key's file")
struct KeyServiceTests {
    @Test("a due key whose file this node lacks waits while another node may hold it, and is abandoned when none can")
    func dueKeyWithoutItsFile() async throws {
        let fixture = try FlowFixture("keys")
        defer { try? fixture.close() }
        let keys = fixture.services.keys
        let published = try await keys.rotate(overlapSeconds: 60, retireAfterSeconds: nil, metadata: TestStore.admin)
        // As on a node elected before it fetched the file.
        try FileManager.default.removeItem(atPath: fixture.test.store.directory.signingKeyFile(keyID: published.keyId))
        fixture.clock.advance(milliseconds: 59_000)
        #expect(try await keys.recordDueSteps(sought: [published.keyId]) == KeyService.UndoneSteps())
        fixture.clock.advance(milliseconds: 2_000)
        let waiting = try await keys.recordDueSteps(sought: [published.keyId])
        #expect(waiting.abandoned.isEmpty && waiting.waiting == [published.keyId])
        #expect(try fixture.test.store.signingKeyRing().ring.pending?.keyId == published.keyId)
        let abandoned = try await keys.recordDueSteps()
        #expect(abandoned.abandoned == [published.keyId] && abandoned.waiting.isEmpty)
        #expect(try fixture.test.store.signingKeyRing().ring.pending == nil)
    }
}
