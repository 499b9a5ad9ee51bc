import HearthAuth
import HearthDomain
import HearthTesting
import Testing

@Suite("flows: sessions, without HTTP")
struct SessionServiceTests {
    @Test("a refresh token yields a new ID token for the same account until the account is disabled")
    func refreshUntilDisabled() async throws {
        let flow = try FlowFixture("sessions-refresh")
        defer { try? flow.close() }
        let session = try await flow.services.signIn.signUpWithPassword(
            email: "sam@example.com", password: "a long password", displayName: nil, flow.user)
        let sessions = flow.services.sessions
        flow.clock.advance(milliseconds: 1000)
        let refreshed = try await sessions.refresh(session.tokens.refreshToken, flow.user)
        #expect(refreshed.account.uid == session.account.uid && refreshed.tokens.idToken != session.tokens.idToken)
        #expect(try flow.services.accounts.account(bearing: refreshed.tokens.idToken, flow.user).uid == session.account.uid)
        var changes = AccountService.Changes()
        changes.disabled = true
        _ = try await flow.services.accounts.update(.uid(session.account.uid), changes, flow.admin, origin: flow.origin)
        #expect(await refusal { try await sessions.refresh(session.tokens.refreshToken, flow.user) } == "USER_DISABLED")
        #expect(await refusal { try await sessions.refresh("not-a-token", flow.user) } == "INVALID_REFRESH_TOKEN")
    }

    @Test("session cookies last 5 minutes to 2 weeks")
    func cookieDurations() async throws {
        let flow = try FlowFixture("sessions-cookie")
        defer { try? flow.close() }
        let session = try await flow.services.signIn.signUpAnonymously(flow.user)
        let sessions = flow.services.sessions
        #expect(!(try sessions.createSessionCookie(idToken: session.tokens.idToken, validDuration: 300, flow.admin)).isEmpty)
        for duration: Int64 in [299, 1_209_601] {
            #expect(
                await refusal { try sessions.createSessionCookie(idToken: session.tokens.idToken, validDuration: duration, flow.admin) }
                    == "INVALID_DURATION")
        }
    }
}
