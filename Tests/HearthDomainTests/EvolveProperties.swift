import HearthDomain
import PropertyBased
import Testing

@Suite("evolve and time: properties")
struct EvolveProperties {
    /// Events that can follow an anonymous creation, chosen by number.
    static func event(_ n: Int) -> EventPayload {
        switch n % 9 {
        case 0: .signInRecorded(SignInRecorded(method: n % 2 == 0 ? "anonymous" : "emailLink"))
        case 1: .providerLinked(ProviderLinked(provider: ProviderLink(providerId: "google.com", federatedId: "\(n)")))
        case 2: .providerUnlinked(ProviderUnlinked(providerId: "google.com"))
        case 3: .passwordSet(PasswordSet(password: PasswordHash(algorithm: "SCRYPT", hash: [1], salt: [2]), reason: .initial))
        case 4: .passwordRemoved(PasswordRemoved(reason: .unlinked))
        case 5: .refreshTokenIssued(RefreshTokenIssued(tokenHash: "t\(n)"))
        case 6: .sessionsRevoked(SessionsRevoked(validSince: Int64(n), reason: .admin))
        case 7: .profileUpdated(ProfileUpdated(phoneNumber: n % 2 == 0 ? "+1555\(n)" : nil, deleted: n % 2 == 0 ? [] : [.phoneNumber]))
        default: .emailChanged(EmailChanged(email: "e\(n)@x.io", verified: false))
        }
    }

    @Test func upgradingIsOneWay() async {
        await propertyCheck(input: Gen.int(in: 0...10_000).array(of: 1...40)) { numbers in
            let uid = UserID("anon")!
            var account = Evolve.account(nil, .accountCreated(AccountCreated(method: .anonymous, createdAt: 0)), uid: uid, at: 0)
            var upgraded = false
            for n in numbers {
                account = Evolve.account(account, Self.event(n), uid: uid, at: Int64(n))
                guard let current = account else {
                    Issue.record("account vanished")
                    return
                }
                if !current.isAnonymous { upgraded = true }
                #expect(!(upgraded && current.isAnonymous))
                #expect(current.isAnonymous == !upgraded)
                #expect(current.refreshTokens.count <= Evolve.maxRefreshTokensPerAccount)
            }
        }
    }

    @Test func timestampsRoundTrip() async {
        await propertyCheck(input: Gen.int64(in: -62_135_596_800_000...253_402_300_799_999)) { millis in
            let text = Timestamp.iso8601(milliseconds: millis)
            #expect(Timestamp.parse(text) == millis)
        }
    }

    @Test func timestampsParseCommonForms() {
        #expect(Timestamp.parse("1970-01-01T00:00:00Z") == 0)
        #expect(Timestamp.parse("2026-11-22") == 1_795_305_600_000)
        #expect(Timestamp.parse("2026-11-22T01:00:00+01:00") == 1_795_305_600_000)
        #expect(Timestamp.parse("2026-11-22T00:00:00.5Z") == 1_795_305_600_500)
        #expect(Timestamp.parse("1795305600000") == 1_795_305_600_000)
        #expect(Timestamp.parse("yesterday") == nil)
        #expect(Timestamp.parse("2026-13-01") == nil)
        #expect(Timestamp.parse("2026-02-30") == nil)
        #expect(Timestamp.parse("2024-02-29") == 1_709_164_800_000)
    }
}
