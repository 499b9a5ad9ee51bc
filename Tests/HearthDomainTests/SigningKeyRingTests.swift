import HearthDomain
import Testing

/// The rules of a rotation, on the fold of its stream: one at a time, replacing the key that
/// signs; activation when the overlap is over; the replaced key withdrawn after its period.
@Suite("domain: signing-key rotations")
struct SigningKeyRingTests {
    static let original = String(repeating: "0", count: 40)
    static let a = String(repeating: "a", count: 40)
    static let b = String(repeating: "b", count: 40)
    static func published(_ keyId: String, replaces: String, at: Int64 = 10_000, retire: Int64 = 60) -> SigningKeyPublished {
        SigningKeyPublished(keyId: keyId, algorithm: "RS256", replaces: replaces, activatesAt: at, retireAfterSeconds: retire)
    }

    @Test("a rotation's steps fall due in order, and each is recorded once")
    func steps() throws {
        var ring = SigningKeyRing()
        #expect(ring.active == nil && ring.due(at: .max).isEmpty && ring.nextStepAt == nil)
        let first = Self.published(Self.a, replaces: Self.original)
        let events = try ring.rotate(to: first, signing: Self.original)
        #expect(events == [.signingKeyPublished(first)])
        ring.apply(events[0], at: 1_000)
        #expect(ring.pending == first && ring.active == Self.original && ring.alsoPublished == [Self.a] && ring.nextStepAt == 10_000)
        #expect(ring.due(at: 9_999).isEmpty)
        #expect(ring.due(at: 10_000) == [.signingKeyActivated(SigningKeyStep(keyId: Self.a))])
        ring.apply(.signingKeyActivated(SigningKeyStep(keyId: Self.a)), at: 10_500)
        #expect(ring.active == Self.a && ring.pending == nil && ring.alsoPublished == [Self.original])
        #expect(ring.nextStepAt == 70_500 && ring.due(at: 70_499).isEmpty)
        #expect(ring.due(at: 70_500) == [.signingKeyWithdrawn(SigningKeyStep(keyId: Self.original))])
        ring.apply(.signingKeyWithdrawn(SigningKeyStep(keyId: Self.original)), at: 70_500)
        #expect(ring.isWithdrawn(Self.original) && ring.alsoPublished.isEmpty && ring.nextStepAt == nil && ring.due(at: .max).isEmpty)
        // The next rotation replaces Self.a.
        #expect(try ring.rotate(to: Self.published(Self.b, replaces: Self.a), signing: Self.a).count == 1)
    }

    @Test("a pending key whose file the recording node lacks waits while another node may hold it, is withdrawn once none does")
    func abandoned() throws {
        var ring = SigningKeyRing()
        ring.apply(.signingKeyPublished(Self.published(Self.a, replaces: Self.original)), at: 0)
        // While another node may hold its file, the step waits: neither activated nor withdrawn.
        #expect(ring.due(at: 10_000, file: { $0 == Self.a ? .sought : .held }).isEmpty && ring.nextStepAt == 10_000)
        #expect(ring.awaitingFile(at: 10_000, file: { $0 == Self.a ? .sought : .held }) == [Self.a])
        #expect(ring.awaitingFile(at: 9_999, file: { _ in .sought }).isEmpty)
        #expect(ring.awaitingFile(at: 10_000, file: { _ in .lost }).isEmpty)
        #expect(ring.due(at: 10_000, file: { $0 == Self.a ? .lost : .held }) == [.signingKeyWithdrawn(SigningKeyStep(keyId: Self.a))])
        ring.apply(.signingKeyWithdrawn(SigningKeyStep(keyId: Self.a)), at: 10_000)
        #expect(ring.pending == nil && ring.active == Self.original && ring.live == [Self.original])
        #expect(throws: KeyRotationError.knownKey(Self.a)) {
            try ring.rotate(to: Self.published(Self.a, replaces: Self.original), signing: Self.original)
        }
        #expect(try ring.rotate(to: Self.published(Self.b, replaces: Self.original), signing: Self.original).count == 1)
        #expect(throws: KeyRotationError.malformedKeyID("../x")) {
            try ring.rotate(to: Self.published("../x", replaces: Self.original), signing: Self.original)
        }
    }

    @Test("refused: a second rotation under way, a known key, a plan made on a stale view of the signing key")
    func refusals() throws {
        var ring = SigningKeyRing()
        ring.apply(.signingKeyPublished(Self.published(Self.a, replaces: Self.original)), at: 0)
        #expect(throws: KeyRotationError.rotationUnderway(Self.a)) {
            try ring.rotate(to: Self.published(Self.b, replaces: Self.original), signing: Self.original)
        }
        ring.apply(.signingKeyActivated(SigningKeyStep(keyId: Self.a)), at: 10_000)
        #expect(throws: KeyRotationError.knownKey(Self.a)) {
            try ring.rotate(to: Self.published(Self.a, replaces: Self.a), signing: Self.a)
        }
        #expect(throws: KeyRotationError.knownKey(Self.original)) {
            try ring.rotate(to: Self.published(Self.original, replaces: Self.a), signing: Self.a)
        }
        #expect(throws: KeyRotationError.notSigning(Self.original)) {
            try ring.rotate(to: Self.published(Self.b, replaces: Self.original), signing: Self.original)
        }
        #expect(throws: KeyRotationError.negativePeriod) {
            try ring.rotate(to: Self.published(Self.b, replaces: Self.a, retire: -1), signing: Self.a)
        }
    }
}
