import HearthAuth
import HearthDomain
import HearthTesting
import Testing

@Suite("flows: sign-up and sign-in, without HTTP")
struct SignInServiceTests {
    @Test("a password sign-up signs in again with the same password, and never with another")
    func passwordRoundTrip() async throws {
        let flow = try FlowFixture("signin-password")
        defer { try? flow.close() }
        let signIn = flow.services.signIn
        let created = try await signIn.signUpWithPassword(
            email: "Ada@Example.com", password: "correct horse", displayName: "Ada", flow.user)
        #expect(created.isNewUser && created.account.email == "ada@example.com" && created.method == .password)
        let again = try await signIn.signInWithPassword(email: "ada@example.com", password: "correct horse", flow.user)
        #expect(again.account.uid == created.account.uid && !again.isNewUser)
        #expect(
            await refusal { try await signIn.signInWithPassword(email: "ada@example.com", password: "wrong horse", flow.user) }
                == "INVALID_PASSWORD")
        #expect(
            await refusal {
                try await signIn.signUpWithPassword(email: "ada@example.com", password: "other pass", displayName: nil, flow.user)
            }
                == "EMAIL_EXISTS")
    }

    @Test("an anonymous account links a password and keeps its uid; createAuthUri then lists password")
    func anonymousLinksPassword() async throws {
        let flow = try FlowFixture("signin-link")
        defer { try? flow.close() }
        let signIn = flow.services.signIn
        let anonymous = try await signIn.signUpAnonymously(flow.user)
        #expect(anonymous.account.isAnonymous && anonymous.method == .anonymous)
        let linked = try await signIn.linkPassword(
            idToken: anonymous.tokens.idToken, email: "grace@example.com", password: "a long password", displayName: nil,
            flow.user, origin: flow.origin)
        #expect(linked.account.uid == anonymous.account.uid && !linked.account.isAnonymous)
        let methods = try #require(try signIn.signInMethods(for: "grace@example.com", flow.user))
        #expect(methods.registered && methods.allProviders == [.password])
        #expect(try signIn.signInMethods(for: "nobody@example.com", flow.user)?.registered == false)
    }

    @Test("under email enumeration protection a wrong password and an unknown email get the same answer")
    func privacy() async throws {
        let flow = try FlowFixture("signin-privacy")
        defer { try? flow.close() }
        _ = try await flow.services.projects.updateConfig(flow.admin) { config in
            var next = config
            next.improvedEmailPrivacy = true
            return next
        }
        let signIn = flow.services.signIn
        _ = try await signIn.signUpWithPassword(email: "quiet@example.com", password: "a long password", displayName: nil, flow.user)
        #expect(
            await refusal { try await signIn.signInWithPassword(email: "quiet@example.com", password: "wrong password", flow.user) }
                == "INVALID_LOGIN_CREDENTIALS")
        #expect(
            await refusal { try await signIn.signInWithPassword(email: "nobody@example.com", password: "wrong password", flow.user) }
                == "INVALID_LOGIN_CREDENTIALS")
        #expect(try signIn.signInMethods(for: "quiet@example.com", flow.user) == nil)
    }

    @Test("a project that turned anonymous sign-up off refuses it")
    func anonymousOff() async throws {
        let flow = try FlowFixture("signin-anonymous-off")
        defer { try? flow.close() }
        _ = try await flow.services.projects.updateConfig(flow.admin) { config in
            var next = config
            next.anonymousEnabled = false
            return next
        }
        #expect(await refusal { try await flow.services.signIn.signUpAnonymously(flow.user) } == "OPERATION_NOT_ALLOWED")
    }
}
