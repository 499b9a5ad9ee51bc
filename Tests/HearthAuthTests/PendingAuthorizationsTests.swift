import HearthDomain
import Testing

@testable import HearthAuth

/// The pending headful sign-ins' bounds: what a flood may evict (only its own kind), and that
/// it costs O(1) per sign-in whatever the table holds.
@Suite("pending headful sign-ins")
struct PendingAuthorizationsTests {
    static let victim = ProjectID("victim-app")!
    static let flooder = ProjectID("flooder-app")!

    static func entry(_ project: ProjectID, at createdAt: Int64) -> PendingAuthorizations.Entry {
        let request = HeadfulRequest(
            apiKey: "key", providerId: .github, sessionHash: "hash", eventId: "event", authType: "signInWithRedirect",
            app: ["ibi": "com.example.app"], redirectURI: "https://auth.example/__/auth/handler", scopes: [], customParameters: [:],
            language: nil)
        return PendingAuthorizations.Entry(request: request, project: project, codeVerifier: "v", nonce: "n", createdAt: createdAt)
    }

    @Test("100,000 starts of one project against a full table: quick, and another project's sign-in survives")
    func projectFlood() {
        let pending = PendingAuthorizations(capacity: 10_000)
        pending.insert(Self.entry(Self.victim, at: 0), state: "victim-state")
        let started = ContinuousClock.now
        for index in 0..<100_000 {
            pending.insert(Self.entry(Self.flooder, at: Int64(index / 1000)), state: "flood-\(index)")
        }
        let elapsed = ContinuousClock.now - started
        // About 5 s in a debug build on a busy machine (CI's host runs some tests 7x slower); a
        // scan of the table per insert (10,000 entries, 100,000 times) takes many minutes.
        #expect(elapsed < .seconds(60), "inserting into a full table must not scan it (\(elapsed))")
        #expect(pending.peek("victim-state", now: 100) != nil)
        #expect(pending.count(project: Self.flooder) == 5_000, "one project holds half the table at most")
        #expect(pending.peek("flood-99999", now: 100) != nil && pending.peek("flood-94999", now: 100) == nil)
        #expect(pending.take("victim-state", now: 100) != nil && pending.take("victim-state", now: 100) == nil)
    }

    @Test("a full table gives up the oldest of the project holding the most, never a smaller project's")
    func largestProjectGivesWay() {
        let pending = PendingAuthorizations(capacity: 10, perProject: 5)
        let third = ProjectID("third-app")!
        for index in 0..<5 { pending.insert(Self.entry(Self.flooder, at: Int64(index)), state: "a\(index)") }
        for index in 0..<3 { pending.insert(Self.entry(Self.victim, at: 10 + Int64(index)), state: "b\(index)") }
        for index in 0..<4 { pending.insert(Self.entry(third, at: 20 + Int64(index)), state: "c\(index)") }
        #expect(pending.count() == 10)
        #expect(pending.count(project: Self.victim) == 3)
        #expect(pending.count(project: Self.flooder) == 3 && pending.peek("a0", now: 30) == nil && pending.peek("a2", now: 30) != nil)
        // Removing and expiring keep the counts straight.
        #expect(pending.take("c0", now: 30) != nil)
        #expect(pending.count(project: third) == 3 && pending.count() == 9)
        pending.insert(Self.entry(third, at: PendingAuthorizations.lifetime + 12), state: "late")
        #expect(pending.count(project: Self.flooder) == 0 && pending.count(project: Self.victim) == 0)
        #expect(pending.count(project: third) == 4 && pending.count() == 4)
        #expect(pending.peek("c1", now: PendingAuthorizations.lifetime + 30) == nil, "expired")
    }
}
