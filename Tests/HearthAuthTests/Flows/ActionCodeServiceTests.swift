import HearthAuth
import HearthDomain
import HearthTesting
import Testing

@Suite("flows: action codes, without HTTP")
struct ActionCodeServiceTests {
    @Test("a password reset code changes the password once; the old password and a second use are refused")
    func passwordReset() async throws {
        let flow = try FlowFixture("codes-reset")
        defer { try? flow.close() }
        _ = try await flow.services.signIn.signUpWithPassword(
            email: "reset@example.com", password: "first password", displayName: nil, flow.user)
        let codes = flow.services.actionCodes
        let sent = try await codes.sendActionCode(
            ActionCodeService.ActionLinkRequest(
                requestType: .passwordReset, email: "reset@example.com", continueUrl: nil, origin: flow.origin), flow.user)
        #expect(sent.email == "reset@example.com")
        let link = try #require(try flow.lastLink(to: "reset@example.com", .passwordReset))
        #expect(link.oobLink.hasPrefix("http://127.0.0.1:9099/emulator/action?mode=resetPassword&lang=en&oobCode="))
        let info = try await codes.resetPassword(oobCode: link.oobCode, newPassword: "second password", flow.user)
        #expect(info.requestType == .passwordReset && info.email == "reset@example.com")
        #expect(try codes.pendingActionLinks(flow.admin).isEmpty)
        let signIn = flow.services.signIn
        #expect(
            await refusal { try await signIn.signInWithPassword(email: "reset@example.com", password: "first password", flow.user) }
                == "INVALID_PASSWORD")
        _ = try await signIn.signInWithPassword(email: "reset@example.com", password: "second password", flow.user)
        #expect(
            await refusal { try await codes.resetPassword(oobCode: link.oobCode, newPassword: "third password", flow.user) }
                == "INVALID_OOB_CODE")
    }

    @Test("an expired code is refused, and a reset for an unknown address names it")
    func expiryAndUnknown() async throws {
        let flow = try FlowFixture("codes-expiry") { $0.oobCodeLifetime = 60_000 }
        defer { try? flow.close() }
        _ = try await flow.services.signIn.signUpWithPassword(
            email: "late@example.com", password: "first password", displayName: nil, flow.user)
        let codes = flow.services.actionCodes
        let request = ActionCodeService.ActionLinkRequest(
            requestType: .passwordReset, email: "late@example.com", continueUrl: nil, origin: flow.origin)
        _ = try await codes.sendActionCode(request, flow.user)
        let link = try #require(try flow.lastLink(to: "late@example.com", .passwordReset))
        flow.clock.advance(milliseconds: 61_000)
        #expect(
            await refusal { try await codes.resetPassword(oobCode: link.oobCode, newPassword: "second password", flow.user) }
                == "EXPIRED_OOB_CODE")
        var unknown = request
        unknown.email = "nobody@example.com"
        #expect(await refusal { try await codes.sendActionCode(unknown, flow.user) } == "EMAIL_NOT_FOUND")
    }
}
