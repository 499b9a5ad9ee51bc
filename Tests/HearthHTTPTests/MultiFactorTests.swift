import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import Testing

/// TOTP second factors as the JS and iOS SDKs drive them: enrolment, sign-in with the second
/// step, replays, withdrawal, and the project's `mfa` setting.
@Suite("multi-factor (TOTP) over HTTP")
struct MultiFactorTests {
    static let v2 = "/identitytoolkit.googleapis.com/v2/accounts/"
    static let totpOn: JSONValue = [
        "mfa": ["state": "ENABLED", "providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 1]]]]
    ]

    static func mfa(_ api: APIClient, _ operation: String, _ body: JSONValue) async throws -> Reply {
        try await api.post(v2 + operation + "?key=test-key", body)
    }

    /// A password user with a verified email, signed in; the project allows TOTP.
    static func verifiedUser(_ api: APIClient, _ email: String = "mfa@example.com", admin: HTTPFields = APIClient.admin)
        async throws -> (uid: String, idToken: String)
    {
        let signedUp = try await api.signUp(email: email)
        let uid = try #require(signedUp.string("localId"))
        let verified = try await api.post(
            APIClient.v1 + "projects/demo-hearth/accounts:update", ["localId": .string(uid), "emailVerified": true], headers: admin)
        #expect(verified.status == 200)
        let signedIn = try await api.v1("signInWithPassword", ["email": .string(email), "password": "correct-horse-42"])
        return (uid, try #require(signedIn.string("idToken")))
    }

    /// Enrols a TOTP factor the way `TotpMultiFactorGenerator` does; returns the app and the answer.
    static func enrol(_ harness: APIHarness, _ api: APIClient, idToken: String, name: String = "Phone app") async throws
        -> (app: TOTPGenerator, finalized: Reply)
    {
        let started = try await mfa(api, "mfaEnrollment:start", ["idToken": .string(idToken), "totpEnrollmentInfo": [:]])
        #expect(started.status == 200, "\(started.json)")
        let info = try #require(started["totpSessionInfo"])
        #expect(info["verificationCodeLength"] == 6)
        #expect(info["hashingAlgorithm"] == "SHA1")
        #expect(info["periodSec"] == 30)
        let secret = try #require(info["sharedSecretKey"]?.stringValue)
        let app = try #require(TOTPGenerator(base32: secret))
        #expect(app.secret.count == 20)
        let deadline = try #require(info["finalizeEnrollmentTime"]?.stringValue)
        #expect(deadline.hasSuffix("Z") && deadline.contains("."))
        let finalized = try await mfa(
            api, "mfaEnrollment:finalize",
            [
                "idToken": .string(idToken), "displayName": .string(name),
                "totpVerificationInfo": [
                    "sessionInfo": try #require(info["sessionInfo"]), "verificationCode": .string(app.code(at: harness.clock.now() / 1000)),
                ],
            ])
        return (app, finalized)
    }

    @Test("enrol, then a password sign-in stops at the second factor; its code completes it, once")
    func enrolAndSignIn() async throws {
        try await APIHarness.run { harness, api in
            #expect(try await ProjectConfigTests.patch(api, Self.totpOn, mask: "mfa").status == 200)
            let config = try await ProjectConfigTests.get(api)
            #expect(config["mfa"]?["state"] == "ENABLED")
            #expect(config["mfa"]?["providerConfigs"]?.arrayValue?.first?["totpProviderConfig"]?["adjacentIntervals"] == 1)
            let (uid, idToken) = try await Self.verifiedUser(api)
            let (app, finalized) = try await Self.enrol(harness, api, idToken: idToken)
            #expect(finalized.status == 200, "\(finalized.json)")
            let enrolled = claims(finalized.string("idToken"))["firebase"]
            #expect(enrolled?["sign_in_second_factor"] == "totp")
            let enrollmentId = try #require(enrolled?["second_factor_identifier"]?.stringValue)

            // The record shows the factor as Firebase does; nothing of its secret.
            let record = try await api.lookup(try #require(finalized.string("idToken")))["users"]?.arrayValue?.first
            let info = try #require(record?["mfaInfo"]?.arrayValue?.first)
            #expect(info["mfaEnrollmentId"]?.stringValue == enrollmentId)
            #expect(info["displayName"] == "Phone app")
            #expect(info["totpInfo"] == [:])
            #expect(info["enrolledAt"]?.stringValue?.hasSuffix("Z") == true)
            #expect(info.objectValue?.count == 4)

            // First factor: no tokens, a pending credential and the factors.
            let first = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            #expect(first.status == 200)
            #expect(first["idToken"] == nil && first["refreshToken"] == nil)
            #expect(first.string("localId") == uid)
            #expect(first["mfaInfo"]?.arrayValue?.first?["mfaEnrollmentId"]?.stringValue == enrollmentId)
            let pending = try #require(first.string("mfaPendingCredential"))
            func finish(_ code: String, credential: String? = nil) async throws -> Reply {
                try await Self.mfa(
                    api, "mfaSignIn:finalize",
                    [
                        "mfaPendingCredential": .string(credential ?? pending), "mfaEnrollmentId": .string(enrollmentId),
                        "totpVerificationInfo": ["verificationCode": .string(code)],
                    ])
            }
            let now = harness.clock.now() / 1000
            // A wrong code; the enrolment's own code (its time step is spent); a code outside the window.
            #expect(try await finish("000000").errorCode == "INVALID_CODE")
            #expect(try await finish(app.code(at: now)).errorCode == "INVALID_CODE")
            #expect(try await finish(app.code(at: now + 90)).errorCode == "INVALID_CODE")
            #expect(try await finish(app.code(at: now + 30), credential: "bogus").errorCode == "INVALID_MFA_PENDING_CREDENTIAL")

            harness.clock.advance(milliseconds: 30_000)
            let done = try await finish(app.code(at: now + 30))
            #expect(done.status == 200, "\(done.json)")
            let session = claims(done.string("idToken"))
            #expect(session["firebase"]?["sign_in_provider"] == "password")
            #expect(session["firebase"]?["sign_in_second_factor"] == "totp")
            #expect(session["firebase"]?["second_factor_identifier"]?.stringValue == enrollmentId)
            // The claim outlives a refresh; the credential is spent; the code's step too.
            let refreshed = try await api.refresh(try #require(done.string("refreshToken")))
            #expect(claims(refreshed.string("id_token"))["firebase"]?["sign_in_second_factor"] == "totp")
            #expect(try await finish(app.code(at: now + 60)).errorCode == "INVALID_MFA_PENDING_CREDENTIAL")
            let again = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            let another = try #require(again.string("mfaPendingCredential"))
            #expect(try await finish(app.code(at: now + 30), credential: another).errorCode == "INVALID_CODE")
            // A pending credential lives five minutes.
            harness.clock.advance(milliseconds: 5 * 60_000 + 1)
            #expect(
                try await finish(app.code(at: harness.clock.now() / 1000), credential: another).errorCode
                    == "INVALID_MFA_PENDING_CREDENTIAL")
            #expect(
                try harness.eventTypes(of: uid).filter { $0.hasPrefix("account.mfa") } == ["account.mfa_enrolled", "account.mfa_code_used"])
        }
    }

    @Test("withdrawing a factor ends the account's sessions; the caller goes on, and signs in on one factor again")
    func withdraw() async throws {
        try await APIHarness.run { harness, api in
            #expect(try await ProjectConfigTests.patch(api, Self.totpOn, mask: "mfa").status == 200)
            let (_, idToken) = try await Self.verifiedUser(api)
            let (_, finalized) = try await Self.enrol(harness, api, idToken: idToken)
            let fresh = try #require(finalized.string("idToken"))
            let enrollmentId = try #require(claims(fresh)["firebase"]?["second_factor_identifier"])
            #expect(try await Self.mfa(api, "mfaEnrollment:withdraw", ["idToken": .string(fresh)]).errorCode == "MISSING_MFA_ENROLLMENT_ID")
            #expect(
                try await Self.mfa(api, "mfaEnrollment:withdraw", ["idToken": .string(fresh), "mfaEnrollmentId": "nope"]).errorCode
                    == "MFA_ENROLLMENT_NOT_FOUND")
            harness.clock.advance(milliseconds: 1000)
            let withdrawn = try await Self.mfa(api, "mfaEnrollment:withdraw", ["idToken": .string(fresh), "mfaEnrollmentId": enrollmentId])
            #expect(withdrawn.status == 200, "\(withdrawn.json)")
            #expect(claims(withdrawn.string("idToken"))["firebase"]?["sign_in_second_factor"] == nil)
            #expect(try await api.refresh(try #require(finalized.string("refreshToken"))).status == 400)
            #expect(try await api.lookup(fresh).errorCode == "TOKEN_EXPIRED")
            let record = try await api.lookup(try #require(withdrawn.string("idToken")))["users"]?.arrayValue?.first
            #expect(record?["mfaInfo"] == nil)
            let signedIn = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            #expect(signedIn["idToken"] != nil && signedIn["mfaPendingCredential"] == nil)
        }
    }

    @Test("Firebase's enrolment rules: MFA on, a verified email, a supported first factor, at most five factors")
    func enrolmentRules() async throws {
        try await APIHarness.run { harness, api in
            let (uid, idToken) = try await Self.verifiedUser(api)
            let start: JSONValue = ["idToken": .string(idToken), "totpEnrollmentInfo": [:]]
            #expect(try await Self.mfa(api, "mfaEnrollment:start", start).errorCode == "OPERATION_NOT_ALLOWED")
            #expect(try await ProjectConfigTests.patch(api, Self.totpOn, mask: "mfa").status == 200)
            #expect(try await Self.mfa(api, "mfaEnrollment:start", ["totpEnrollmentInfo": [:]]).errorCode == "MISSING_ID_TOKEN")
            #expect(try await Self.mfa(api, "mfaEnrollment:start", ["idToken": .string(idToken)]).errorCode == "INVALID_ARGUMENT")
            #expect(
                try await Self.mfa(api, "mfaEnrollment:start", ["idToken": .string(idToken), "phoneEnrollmentInfo": [:]]).errorCode
                    == "OPERATION_NOT_ALLOWED")
            let anonymous = try await api.v1("signUp", ["returnSecureToken": true])
            #expect(
                try await Self.mfa(api, "mfaEnrollment:start", ["idToken": anonymous["idToken"]!, "totpEnrollmentInfo": [:]]).errorCode
                    == "UNSUPPORTED_FIRST_FACTOR")
            let unverified = try await api.signUp(email: "unverified@example.com")
            #expect(
                try await Self.mfa(api, "mfaEnrollment:start", ["idToken": unverified["idToken"]!, "totpEnrollmentInfo": [:]]).errorCode
                    == "UNVERIFIED_EMAIL")

            // A session info is bound to its account and expires; a finalize is not repeated.
            let started = try await Self.mfa(api, "mfaEnrollment:start", start)
            let info = try #require(started["totpSessionInfo"])
            let secret = try #require(info["sharedSecretKey"]?.stringValue)
            let app = try #require(TOTPGenerator(base32: secret))
            func finalize(_ token: JSONValue, session: JSONValue? = nil, code: String? = nil) async throws -> Reply {
                try await Self.mfa(
                    api, "mfaEnrollment:finalize",
                    [
                        "idToken": token,
                        "totpVerificationInfo": [
                            "sessionInfo": session ?? info["sessionInfo"]!,
                            "verificationCode": .string(code ?? app.code(at: harness.clock.now() / 1000)),
                        ],
                    ])
            }
            #expect(try await finalize(unverified["idToken"]!).errorCode == "INVALID_SESSION_INFO")
            #expect(try await finalize(.string(idToken), session: "tampered").errorCode == "INVALID_SESSION_INFO")
            #expect(try await finalize(.string(idToken), code: "12345").errorCode == "INVALID_CODE")
            #expect(try await finalize(.string(idToken)).status == 200)
            #expect(try await finalize(.string(idToken)).errorCode == "SECOND_FACTOR_EXISTS")
            let late = try await Self.mfa(api, "mfaEnrollment:start", start)
            harness.clock.advance(milliseconds: 10 * 60_000 + 1)
            #expect(try await finalize(.string(idToken), session: late["totpSessionInfo"]?["sessionInfo"]).errorCode == "SESSION_EXPIRED")

            // Five factors at most (signing in again, with a second factor, for each).
            for index in 2...5 {
                let session = try await Self.signInWithSecondFactor(harness, api, app: app)
                let (_, finalized) = try await Self.enrol(harness, api, idToken: session, name: "factor \(index)")
                #expect(finalized.status == 200, "\(finalized.json)")
            }
            let session = try await Self.signInWithSecondFactor(harness, api, app: app)
            #expect(
                try await Self.mfa(api, "mfaEnrollment:start", ["idToken": .string(session), "totpEnrollmentInfo": [:]]).errorCode
                    == "SECOND_FACTOR_LIMIT_EXCEEDED")
            #expect(try harness.eventTypes(of: uid).filter { $0 == "account.mfa_enrolled" }.count == 5)
        }
    }

    /// A password sign-in completed with the first factor's code, a step later than the last.
    static func signInWithSecondFactor(_ harness: APIHarness, _ api: APIClient, app: TOTPGenerator) async throws -> String {
        harness.clock.advance(milliseconds: 30_000)
        let first = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
        let done = try await mfa(
            api, "mfaSignIn:finalize",
            [
                "mfaPendingCredential": first["mfaPendingCredential"]!,
                "mfaEnrollmentId": first["mfaInfo"]!.arrayValue!.first!["mfaEnrollmentId"]!,
                "totpVerificationInfo": ["verificationCode": .string(app.code(at: harness.clock.now() / 1000))],
            ])
        return try #require(done.string("idToken"), "\(done.json)")
    }

    @Test("email-link, federated and custom-token sign-ins stop at the second factor too")
    func otherFirstFactors() async throws {
        try await APIHarness.run { harness, api in
            #expect(try await ProjectConfigTests.patch(api, Self.totpOn, mask: "mfa").status == 200)
            let (uid, idToken) = try await Self.verifiedUser(api)
            let (app, _) = try await Self.enrol(harness, api, idToken: idToken)

            let code = try await EmailLinkTests.sendLink(api, to: "mfa@example.com")
            let link = try await api.v1("signInWithEmailLink", ["email": "mfa@example.com", "oobCode": .string(code)])
            #expect(link.string("kind") == "identitytoolkit#EmailLinkSigninResponse")
            #expect(link["idToken"] == nil && link.string("mfaPendingCredential") != nil, "\(link.json)")

            let profile: JSONValue = ["sub": "g-1", "email": "mfa@example.com", "email_verified": true]
            let federated = try await api.v1("signInWithIdp", FederatedTests.credential("google.com", profile))
            #expect(federated.string("providerId") == "google.com")
            #expect(federated.string("localId") == uid)
            #expect(federated["idToken"] == nil && federated.string("mfaPendingCredential") != nil, "\(federated.json)")

            let token = CustomTokenTests.unsigned(CustomTokenTests.payload(uid: .string(uid), claims: ["tier": 2]))
            let custom = try await api.v1("signInWithCustomToken", ["token": .string(token)])
            #expect(custom["idToken"] == nil && custom.string("mfaPendingCredential") != nil, "\(custom.json)")
            // Completed, the session is the custom token's, with its claims and the second factor.
            harness.clock.advance(milliseconds: 30_000)
            let done = try await Self.mfa(
                api, "mfaSignIn:finalize",
                [
                    "mfaPendingCredential": custom["mfaPendingCredential"]!,
                    "mfaEnrollmentId": custom["mfaInfo"]!.arrayValue!.first!["mfaEnrollmentId"]!,
                    "totpVerificationInfo": ["verificationCode": .string(app.code(at: harness.clock.now() / 1000))],
                ])
            let session = claims(done.string("idToken"))
            #expect(session["tier"] == 2)
            #expect(session["firebase"]?["sign_in_provider"] == "custom")
            #expect(session["firebase"]?["sign_in_second_factor"] == "totp")
        }
    }

    @Test("an administrator lists factors and removes them (mfa.enrollments); MANDATORY keeps a user's last one")
    func administratorAndMandatory() async throws {
        try await APIHarness.run { harness, api in
            let mandatory: JSONValue = [
                "mfa": ["state": "MANDATORY", "providerConfigs": [["state": "ENABLED", "totpProviderConfig": [:]]]]
            ]
            #expect(try await ProjectConfigTests.patch(api, mandatory, mask: "mfa").status == 200)
            let (uid, idToken) = try await Self.verifiedUser(api)
            let (app, finalized) = try await Self.enrol(harness, api, idToken: idToken)
            let session = try #require(finalized.string("idToken"))
            let enrollmentId = try #require(claims(session)["firebase"]?["second_factor_identifier"])
            #expect(
                try await Self.mfa(api, "mfaEnrollment:withdraw", ["idToken": .string(session), "mfaEnrollmentId": enrollmentId])
                    .errorCode == "OPERATION_NOT_ALLOWED")
            let second = try await Self.enrol(harness, api, idToken: try await Self.signInWithSecondFactor(harness, api, app: app))
            #expect(second.finalized.status == 200)

            // The Admin SDK reads the factors, with no secret among them.
            let listed = try await api.admin("accounts:lookup", ["localId": [.string(uid)]])
            let factors = try #require(listed["users"]?.arrayValue?.first?["mfaInfo"]?.arrayValue)
            #expect(factors.count == 2)
            #expect(!listed.json.text.contains(app.base32Prefix))
            let latest = try #require(second.finalized["idToken"])
            #expect(try await api.v1("update", ["idToken": latest, "mfa": ["enrollments": []]]).errorCode == "INSUFFICIENT_PERMISSION")
            // Keeping one by its id withdraws the other; an unknown id adds nothing.
            let keep: JSONValue = ["localId": .string(uid), "mfa": ["enrollments": [["mfaEnrollmentId": enrollmentId]]]]
            #expect(try await api.admin("accounts:update", keep).status == 200)
            let unknown: JSONValue = ["localId": .string(uid), "mfa": ["enrollments": [["mfaEnrollmentId": "someone-elses"]]]]
            #expect(try await api.admin("accounts:update", unknown).errorCode == "MFA_ENROLLMENT_NOT_FOUND")
            #expect(try await api.admin("accounts:update", ["localId": .string(uid), "mfa": ["enrollments": .null]]).status == 400)
            // An administrator may take the last one, even under MANDATORY.
            #expect(try await api.admin("accounts:update", ["localId": .string(uid), "mfa": [:]]).status == 200)
            let record = try await api.admin("accounts:lookup", ["localId": [.string(uid)]])
            #expect(record["users"]?.arrayValue?.first?["mfaInfo"] == nil)
            let types = try harness.eventTypes(of: uid)
            #expect(types.filter { $0 == "account.mfa_withdrawn" }.count == 2)
            let signedIn = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            #expect(signedIn["idToken"] != nil)
        }
    }

    @Test("production: enrolment needs a recent sign-in, and wrong codes count toward the abuse limits")
    func production() async throws {
        try await APIHarness.run(configure: AbuseLimitHTTPTests.production(), live: true) { harness, api in
            #expect(
                try await ProjectConfigTests.patch(api, Self.totpOn, mask: "mfa", headers: HeadfulSignInTests.productionAdmin).status == 200
            )
            let (_, idToken) = try await Self.verifiedUser(api, admin: HeadfulSignInTests.productionAdmin)
            harness.clock.advance(milliseconds: 6 * 60_000)
            let stale = try await Self.mfa(api, "mfaEnrollment:start", ["idToken": .string(idToken), "totpEnrollmentInfo": [:]])
            #expect(stale.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            let signedIn = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            let (_, finalized) = try await Self.enrol(harness, api, idToken: try #require(signedIn.string("idToken")))
            #expect(finalized.status == 200, "\(finalized.json)")

            harness.clock.advance(milliseconds: 30_000)
            let first = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            var answers: [String] = []
            for _ in 0..<8 {
                let reply = try await Self.mfa(
                    api, "mfaSignIn:finalize",
                    [
                        "mfaPendingCredential": first["mfaPendingCredential"]!,
                        "mfaEnrollmentId": first["mfaInfo"]!.arrayValue!.first!["mfaEnrollmentId"]!,
                        "totpVerificationInfo": ["verificationCode": "000000"],
                    ])
                answers.append(reply.errorCode ?? "OK")
            }
            #expect(answers.prefix(5).allSatisfy { $0 == "INVALID_CODE" }, "\(answers)")
            #expect(answers.last == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(answers)")
        }
    }

    @Test("production: the whole round, sign-in with the second step, a replay, withdrawal and MANDATORY")
    func productionRound() async throws {
        try await APIHarness.run(configure: AbuseLimitHTTPTests.production()) { harness, api in
            let admin = HeadfulSignInTests.productionAdmin
            let mandatory: JSONValue = [
                "mfa": ["state": "MANDATORY", "providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 1]]]]
            ]
            #expect(try await ProjectConfigTests.patch(api, mandatory, mask: "mfa", headers: admin).status == 200)
            let (uid, idToken) = try await Self.verifiedUser(api, admin: admin)
            // Under MANDATORY an account without a factor still signs in, to enrol one.
            let (app, finalized) = try await Self.enrol(harness, api, idToken: idToken)
            #expect(finalized.status == 200, "\(finalized.json)")
            let enrollmentId = try #require(claims(finalized.string("idToken"))["firebase"]?["second_factor_identifier"])

            let first = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            #expect(first["idToken"] == nil)
            let code = app.code(at: harness.clock.now() / 1000 + 30)
            func finish(_ pending: JSONValue?) async throws -> Reply {
                try await Self.mfa(
                    api, "mfaSignIn:finalize",
                    [
                        "mfaPendingCredential": pending ?? .null, "mfaEnrollmentId": enrollmentId,
                        "totpVerificationInfo": ["verificationCode": .string(code)],
                    ])
            }
            let done = try await finish(first["mfaPendingCredential"])
            #expect(claims(done.string("idToken"))["firebase"]?["sign_in_second_factor"] == "totp", "\(done.json)")
            // The same code again, with a fresh pending credential: replayed, refused.
            harness.clock.advance(milliseconds: 1000)
            let again = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            #expect(try await finish(again["mfaPendingCredential"]).errorCode == "INVALID_CODE")
            // The user's last factor stays under MANDATORY; an administrator may remove it.
            let session = try #require(done["idToken"])
            let withdraw: JSONValue = ["idToken": session, "mfaEnrollmentId": enrollmentId]
            #expect(try await Self.mfa(api, "mfaEnrollment:withdraw", withdraw).errorCode == "OPERATION_NOT_ALLOWED")
            let reset = try await api.post(
                APIClient.v1 + "projects/demo-hearth/accounts:update", ["localId": .string(uid), "mfa": [:]], headers: admin)
            #expect(reset.status == 200)
            let plain = try await api.v1("signInWithPassword", ["email": "mfa@example.com", "password": "correct-horse-42"])
            #expect(plain["idToken"] != nil)
        }
    }

    @Test(
        "an import keeps second factors: SMS ones block a first-factor sign-in until an administrator resets them; TOTP ones with their secret keep working"
    )
    func importKeepsFactors() async throws {
        try await APIHarness.run { harness, api in
            let secret = Array("imported-totp-secret".utf8)
            let app = TOTPGenerator(secret: secret)
            let now = harness.clock.now() / 1000
            let users: JSONValue = [
                [
                    "localId": "sms-user", "email": "sms@example.com", "emailVerified": true, "rawPassword": "correct-horse-42",
                    "mfaInfo": [
                        [
                            "mfaEnrollmentId": "sms-1", "displayName": "Work phone", "phoneInfo": "+15550100",
                            "enrolledAt": "2024-05-01T10:00:00.000Z",
                        ]
                    ],
                ],
                [
                    "localId": "totp-user", "email": "totp@example.com", "emailVerified": true, "rawPassword": "correct-horse-42",
                    "mfaInfo": [
                        ["mfaEnrollmentId": "sms-2", "phoneInfo": "+15550101"],
                        ["mfaEnrollmentId": "app-1", "totpInfo": ["sharedSecretKey": .string(app.base32)]],
                    ],
                ],
                ["localId": "bad-phone", "mfaInfo": [["phoneInfo": "555"]]],
                ["localId": "too-many", "mfaInfo": .array((0..<6).map { .object(["phoneInfo": .string("+1555010\($0)")]) })],
                [
                    "localId": "twice",
                    "mfaInfo": [["mfaEnrollmentId": "x", "phoneInfo": "+15550102"], ["mfaEnrollmentId": "x", "totpInfo": [:]]],
                ],
            ]
            let imported = try await api.admin("accounts:batchCreate", ["users": users])
            #expect(imported.status == 200)
            let errors = try #require(imported["error"]?.arrayValue)
            #expect(errors.map { $0["index"] } == [2, 3, 4], "\(errors)")
            #expect(errors.first?["message"]?.stringValue?.hasPrefix("INVALID_MFA_PHONE_NUMBER") == true)

            let record = try await api.admin("accounts:lookup", ["localId": ["sms-user"]])
            let factor = try #require(record["users"]?.arrayValue?.first?["mfaInfo"]?.arrayValue?.first)
            #expect(
                factor == [
                    "mfaEnrollmentId": "sms-1", "displayName": "Work phone", "phoneInfo": "+15550100",
                    "enrolledAt": "2024-05-01T10:00:00.000Z",
                ])

            // SMS only: not let through on the password alone.
            let password: JSONValue = ["email": "sms@example.com", "password": "correct-horse-42"]
            #expect(try await api.v1("signInWithPassword", password).errorCode == "MFA_REENROLLMENT_REQUIRED")
            // The documented path: an administrator resets the factors; the user signs in and enrols.
            #expect(try await api.admin("accounts:update", ["localId": "sms-user", "mfa": [:]]).status == 200)
            #expect(try await api.v1("signInWithPassword", password)["idToken"] != nil)

            // With a usable TOTP factor beside an SMS one: the second step offers the TOTP one.
            let first = try await api.v1("signInWithPassword", ["email": "totp@example.com", "password": "correct-horse-42"])
            #expect(
                first["mfaInfo"] == [
                    [
                        "mfaEnrollmentId": "app-1", "enrolledAt": .string(Timestamp.iso8601(milliseconds: harness.clock.now())),
                        "totpInfo": [:],
                    ]
                ])
            let sms = try await Self.mfa(
                api, "mfaSignIn:finalize",
                [
                    "mfaPendingCredential": first["mfaPendingCredential"]!, "mfaEnrollmentId": "sms-2",
                    "totpVerificationInfo": ["verificationCode": "123456"],
                ])
            #expect(sms.errorCode == "MFA_REENROLLMENT_REQUIRED")
            let done = try await Self.mfa(
                api, "mfaSignIn:finalize",
                [
                    "mfaPendingCredential": first["mfaPendingCredential"]!, "mfaEnrollmentId": "app-1",
                    "totpVerificationInfo": ["verificationCode": .string(app.code(at: now))],
                ])
            #expect(claims(done.string("idToken"))["firebase"]?["second_factor_identifier"] == "app-1", "\(done.json)")
        }
    }
}

extension TOTPGenerator {
    /// The secret as `sharedSecretKey` gives it.
    var base32: String { Base32.encode(secret) }

    /// The start of the secret as `sharedSecretKey` showed it, to look for in other answers.
    var base32Prefix: String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = secret.prefix(10).map { byte in
            let binary = String(byte, radix: 2)
            return String(repeating: "0", count: 8 - binary.count) + binary
        }.joined()
        var text = ""
        while bits.count >= 5 {
            text.append(alphabet[Int(bits.prefix(5), radix: 2)!])
            bits.removeFirst(5)
        }
        return text
    }
}
