import Crypto
import CryptoExtras
import Foundation
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import Synchronization
import Testing

@Suite("ID tokens and refresh tokens")
struct TokenTests {
    static let project = ProjectID("demo-hearth")!
    static let now: Int64 = 1_767_225_600_000

    static func account() -> Account {
        var account = Account(uid: UserID("user-1")!, createdAt: now - 10_000)
        account.email = "ada@example.com"
        account.customClaims = #"{"role":"admin","tier":2}"#
        account.providers = [ProviderLink(providerId: "github.com", federatedId: "gh-1")]
        return account
    }

    @Test(
        "minted tokens verify, carry the Firebase claims, and fail when expired, tampered or for another project",
        arguments: SigningKey.Algorithm.allCases)
    func roundTrip(algorithm: SigningKey.Algorithm) async throws {
        // RS256 signs on the signing pool, as the daemon does.
        let pool = WorkPool(threads: 1, name: "sign-test")
        defer { pool.stop() }
        let issuer = TokenIssuer(key: try SigningKey.generate(algorithm), signingPool: pool)
        let token = try await issuer.idToken(for: Self.account(), in: Self.project, method: .password, now: Self.now)
        let verified = try issuer.verifyIDToken(token, project: Self.project, now: Self.now + 1000)
        #expect(verified.uid.rawValue == "user-1")
        #expect(verified.method == .password)
        #expect(verified.claims["role"] == "admin")
        #expect(verified.claims["tier"] == 2)
        #expect(verified.claims["firebase"]?["identities"]?["github.com"] == ["gh-1"])
        #expect(verified.claims["email"] == "ada@example.com")
        #expect(verified.claims["exp"] == .int(Self.now / 1000 + 3600))

        // A second use comes from the verified-token cache, which still enforces expiry and project.
        #expect(try issuer.verifyIDToken(token, project: Self.project, now: Self.now + 2000) == verified)
        #expect(throws: TokenError.expired) { try issuer.verifyIDToken(token, project: Self.project, now: Self.now + 3_601_000) }
        #expect(throws: TokenError.invalid) { try issuer.verifyIDToken(token, project: ProjectID("other")!, now: Self.now) }
        var parts = token.split(separator: ".").map(String.init)
        var payload = try #require(JWT.decode(token)?.payload)
        payload["sub"] = "someone-else"
        parts[1] = Base64URL.encode(JSONValue.object(payload).encoded())
        #expect(throws: TokenError.invalid) { try issuer.verifyIDToken(parts.joined(separator: "."), project: Self.project, now: Self.now) }
        let otherKey = TokenIssuer(key: try SigningKey.generate(algorithm))
        #expect(throws: TokenError.invalid) { try otherKey.verifyIDToken(token, project: Self.project, now: Self.now) }
    }

    @Test("a token issued or signed in more than five minutes ahead of this clock is refused; within the skew it verifies")
    func futureTokens() async throws {
        let issuer = TokenIssuer(key: try SigningKey.generate(.es256))
        var account = Self.account()
        // Minted by a clock six minutes ahead: iat and auth_time both lie in the future.
        account.lastSignInAt = Self.now + 360_000
        let ahead = try await issuer.idToken(for: account, in: Self.project, method: .password, now: Self.now + 360_000)
        #expect(throws: TokenError.invalid) { try issuer.verifyIDToken(ahead, project: Self.project, now: Self.now) }
        // Only auth_time ahead (iat now).
        let signedInAhead = try await issuer.idToken(for: account, in: Self.project, method: .password, now: Self.now)
        #expect(throws: TokenError.invalid) { try issuer.verifyIDToken(signedInAhead, project: Self.project, now: Self.now) }
        // Up to exactly five minutes ahead is within Firebase's skew; a second more is not.
        account.lastSignInAt = Self.now + 300_000
        let skewed = try await issuer.idToken(for: account, in: Self.project, method: .password, now: Self.now + 300_000)
        #expect(try issuer.verifyIDToken(skewed, project: Self.project, now: Self.now).uid == account.uid)
        account.lastSignInAt = Self.now + 301_000
        let past = try await issuer.idToken(for: account, in: Self.project, method: .password, now: Self.now + 301_000)
        #expect(throws: TokenError.invalid) { try issuer.verifyIDToken(past, project: Self.project, now: Self.now) }
    }

    @Test("the published RS256 JWK verifies a token with nothing but n and e")
    func jwk() async throws {
        let key = try SigningKey.generate(.rs256)
        let token = try await TokenIssuer(key: key).idToken(for: Self.account(), in: Self.project, method: .password, now: Self.now)
        let jwk = key.publicJWK
        let n = try #require(jwk["n"]?.stringValue.flatMap(Base64URL.decode))
        let e = try #require(jwk["e"]?.stringValue.flatMap(Base64URL.decode))
        let publicKey = try _RSA.Signing.PublicKey(n: n, e: e)
        let parts = try #require(JWT.decode(token))
        #expect(parts.header["kid"]?.stringValue == key.keyID)
        let valid = publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: parts.signature), for: SHA256.hash(data: parts.signingInput),
            padding: .insecurePKCS1v1_5)
        #expect(valid)
    }

    @Test("signing keys are created once, 0600, and reloaded")
    func keyFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-key-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/signing-key-es256.pem"
        let first = try SigningKey.loadOrCreate(at: path, algorithm: .es256)
        let again = try SigningKey.loadOrCreate(at: path, algorithm: .es256)
        #expect(first.keyID == again.keyID)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // Written under a temporary name and linked into place: nothing else is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["signing-key-es256.pem"])
        // A damaged key file is an error, never silently replaced (every token it signed would die).
        try "-----BEGIN PRIVATE KEY-----\ngarbage\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: SigningKeyError.self) { try SigningKey.loadOrCreate(at: path, algorithm: .es256) }
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("garbage"))
    }

    @Test("refresh tokens carry their account and provider; v1 tokens (no account) still parse; anything else is not ours")
    func refreshTokens() throws {
        let directory = TemporaryDirectory("refresh-tokens")
        let secrets = SecretSealer(keyFile: directory.path + "/secrets.key")
        let uid = UserID("0V70MWDgAbCdEfGhIjKlMnOpQrSt")!
        let token = try TokenIssuer.newRefreshToken(for: uid, method: "github.com", signedInAt: 1_790_000_000, secrets: secrets)
        #expect(token.text.hasPrefix("3."))
        #expect(token.session?.uid == uid)
        #expect(token.session?.method == "github.com")
        #expect(token.session?.signedInAt == 1_790_000_000)
        #expect(token.session?.claims.isEmpty == true)
        #expect(token.hash.count == 64)
        #expect(
            try TokenIssuer.newRefreshToken(for: uid, method: "github.com", signedInAt: 1_790_000_000, secrets: secrets).hash != token.hash)
        let custom = try TokenIssuer.newRefreshToken(
            for: UserID("an.admin's uid")!, method: .custom, signedInAt: 5, claims: ["tier": 2], secrets: secrets)
        #expect(custom.session?.uid == UserID("an.admin's uid"))
        #expect(custom.session?.claims == ["tier": 2])

        let secret = Base64URL.encode([UInt8](repeating: 7, count: 32))
        let legacy = RefreshToken(text: "1.Z2l0aHViLmNvbQ." + secret)
        #expect(legacy.session != nil)
        #expect(legacy.session?.uid == nil)
        #expect(legacy.session?.method == "github.com")
        let version2 = RefreshToken(text: "2.\(Base64URL.encode(Array(uid.rawValue.utf8))).Z2l0aHViLmNvbQ." + secret)
        #expect(version2.session?.uid == uid && version2.session?.signedInAt == nil)
        for garbage in [
            "", "x", "1.Z2l0aHViLmNvbQ.short", "2.Z2l0aHViLmNvbQ.\(String(repeating: "A", count: 43))", "a.b.c.d",
            "3.Z2l0aHViLmNvbQ." + secret, "2..Z2l0aHViLmNvbQ." + secret, "2.AA.Z2l0aHViLmNvbQ." + secret,
            "1.Z2l0aHViLmNvbQ.\(secret).e30.extra", "3.AA.Z2l0aHViLmNvbQ.-5." + secret, "3.AA.Z2l0aHViLmNvbQ.x." + secret,
            "4.AA.Z2l0aHViLmNvbQ." + secret,
        ] {
            #expect(RefreshToken(text: garbage).session == nil, "\(garbage)")
        }
    }

    @Test("a refresh token the daemon issued is told from a forged, altered or untagged one only with its secrets key")
    func issuedRefreshTokens() throws {
        let directory = TemporaryDirectory("refresh-token-tags")
        let secrets = SecretSealer(keyFile: directory.path + "/secrets.key")
        let forger = SecretSealer(keyFile: directory.path + "/forger.key")
        let uid = UserID("0V70MWDgAbCdEfGhIjKlMnOpQrSt")!
        let token = try TokenIssuer.newRefreshToken(
            for: uid, method: .password, signedInAt: 1_790_000_000, claims: ["a": 1], secrets: secrets)
        #expect(token.isIssued(by: secrets))
        #expect(!token.isIssued(by: forger))
        #expect(
            !(try TokenIssuer.newRefreshToken(for: uid, method: .password, signedInAt: 1_790_000_000, secrets: forger)).isIssued(
                by: secrets))
        // Another uid or sign-in time with the same secret: the tag covers them.
        let other = UserID("someone-else")!
        let moved = token.text.replacingOccurrences(
            of: Base64URL.encode(Array(uid.rawValue.utf8)), with: Base64URL.encode(Array(other.rawValue.utf8)))
        #expect(RefreshToken(text: moved).session?.uid == other && !RefreshToken(text: moved).isIssued(by: secrets))
        let earlier = RefreshToken(text: token.text.replacingOccurrences(of: ".1790000000.", with: ".1690000000."))
        #expect(earlier.session?.signedInAt == 1_690_000_000 && !earlier.isIssued(by: secrets))
        // A v3 token from before tags: 32 random bytes.
        let untagged =
            "3.\(Base64URL.encode(Array(uid.rawValue.utf8))).cGFzc3dvcmQ.5.\(Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) }))"
        #expect(RefreshToken(text: untagged).session != nil && !RefreshToken(text: untagged).isIssued(by: secrets))
        #expect(!RefreshToken(text: "garbage").isIssued(by: secrets))
    }
}

@Suite("password hashing")
struct PasswordHasherTests {
    @Test("the hashing pool refuses work past its queue bound at once, and takes work again once it drains")
    func boundedPool() async throws {
        let pool = WorkPool(threads: 1, name: "bounded", maxQueued: 1)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let running = Atomic<Bool>(false)
        async let first: Int = pool.run {
            running.store(true, ordering: .sequentiallyConsistent)
            gate.wait()  // on the pool's own thread, never a cooperative one
            return 1
        }
        // Polled, not awaited on a semaphore: blocking this task would hold a cooperative thread.
        while !running.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(2)) }
        // The only thread is busy now.
        async let second: Int = pool.run { 2 }
        while pool.waitingJobs < 1 { try await Task.sleep(for: .milliseconds(5)) }
        // The queue holds the second job: a third is refused at once.
        await #expect(throws: WorkPool.Busy()) { try await pool.run { 3 } }
        gate.signal()
        #expect(try await first + second == 3)
        #expect(try await pool.run { 4 } == 4)
    }

    @Test("scrypt hashes verify, wrong passwords fail, old parameters are outdated")
    func scrypt() async throws {
        let pool = WorkPool(threads: 2, name: "test")
        defer { pool.stop() }
        let hasher = PasswordHasher(parameters: .init(logN: 10), pool: pool)
        let hash = try await hasher.hash("correct-horse-42")
        #expect(hash.algorithm == "SCRYPT")
        #expect(hash.salt.count == 16)
        #expect(try await hasher.verify("correct-horse-42", against: hash))
        #expect(try await !hasher.verify("correct-horse-43", against: hash))
        #expect(!hasher.isOutdated(hash))
        #expect(PasswordHasher(parameters: .init(logN: 11), pool: pool).isOutdated(hash))
        let other = try await hasher.hash("correct-horse-42")
        #expect(other.hash != hash.hash)
        let bcrypt = PasswordHash(algorithm: "BCRYPT", hash: [1], salt: [])
        await #expect(throws: PasswordHashError.unsupported("BCRYPT")) { try await hasher.verify("x", against: bcrypt) }
    }

    @Test("input rules: emails, passwords, custom claims, phone numbers")
    func validation() throws {
        #expect(try Validation.email("Ada@Example.COM") == "ada@example.com")
        for bad in ["", "ada", "a@b@c", "@b", "a@"] {
            #expect(throws: FirebaseError.self) { try Validation.email(bad) }
        }
        #expect(throws: FirebaseError.weakPassword) { try Validation.password("12345") }
        #expect(try Validation.customClaims("{}") == nil)
        #expect(try Validation.customClaims(#"{"b":1,"a":"x"}"#) == #"{"a":"x","b":1}"#)
        #expect(throws: FirebaseError.bad("FORBIDDEN_CLAIM : exp")) { try Validation.customClaims(#"{"exp":1}"#) }
        #expect(throws: FirebaseError.bad("CLAIMS_TOO_LARGE")) {
            try Validation.customClaims("{\"a\":\"\(String(repeating: "x", count: 1000))\"}")
        }
        #expect(try Validation.phoneNumber("+15555550100") == "+15555550100")
        #expect(throws: FirebaseError.self) { try Validation.phoneNumber("555") }
    }
}

@Suite("the development fake IdP")
struct FakeIdentityProviderTests {
    @Test("reads JSON claims from postBody, JWT claims too; refuses what lacks sub or providerId")
    func parse() throws {
        let json = #"{"sub":"gh-1","email":"Octo@Example.com","email_verified":true,"name":"Octo"}"#
        let encoded = try #require(json.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let identity = try FakeIdentityProvider.identity(
            requestUri: "http://localhost", postBody: "providerId=github.com&id_token=\(encoded)")
        #expect(identity.providerId == "github.com")
        #expect(identity.subject == "gh-1")
        #expect(identity.email == "octo@example.com")
        #expect(identity.emailVerified)
        #expect(identity.displayName == "Octo")

        let jwt = "e30." + Base64URL.encode(Array(#"{"sub":"y-9"}"#.utf8)) + "."
        let fromJWT = try FakeIdentityProvider.identity(requestUri: "http://localhost?providerId=yahoo.com&id_token=\(jwt)", postBody: nil)
        #expect(fromJWT.subject == "y-9")
        #expect(throws: FirebaseError.bad("MISSING_REQUEST_URI")) { try FakeIdentityProvider.identity(requestUri: nil, postBody: "") }
        #expect(throws: FirebaseError.self) {
            try FakeIdentityProvider.identity(requestUri: "http://localhost", postBody: "id_token=%7B%7D")
        }
        #expect(throws: FirebaseError.self) {
            try FakeIdentityProvider.identity(requestUri: "http://localhost", postBody: "providerId=x&id_token=%7B%22sub%22%3A1%7D")
        }
    }

    @Test("a provider's identity beyond the sizes Hearth stores is refused, whichever provider sent it")
    func providerIdentitySizes() throws {
        let fine = FederatedIdentity(
            providerId: .github, subject: "42", email: "a@x.io", emailVerified: true, displayName: "A", photoUrl: nil,
            screenName: "a", rawUserInfo: [:], idToken: nil, accessToken: "t")
        #expect(try fine.checkedSizes() == fine)
        var long = fine
        long.email = String(repeating: "a", count: 400) + "@x.io"
        #expect(throws: FirebaseError.self) { try long.checkedSizes() }
        long = fine
        long.subject = String(repeating: "9", count: 400)
        #expect(throws: FirebaseError.self) { try long.checkedSizes() }
        #expect(FederatedIdentity.isTrue("true") && FederatedIdentity.isTrue(true) && !FederatedIdentity.isTrue(nil))
    }
}
