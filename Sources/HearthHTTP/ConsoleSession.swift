import HearthAuth
import HearthWire

/// A console session: which admin credential signed in (by its token's SHA-256, looked up again
/// on every request, so a token removed from the configuration ends its sessions), when, when it
/// was last used, and the token every form of the session carries against cross-site requests.
/// Kept in its cookie, sealed for Hearth alone (any node of a cluster opens it), so the server
/// holds no session table to fill.
struct ConsoleSession: Equatable, Sendable {
    var tokenDigest: [UInt8]
    var issuedAt: Int64
    var seenAt: Int64
    /// Forms carry it; a change without it is refused.
    var csrf: String
    /// The project an operator chose to look at (its credential must still cover it).
    var project: String?

    static let cookieName = "hearth_console"
    /// Unused this long, a session ends (ms).
    static let idleTimeout: Int64 = 30 * 60 * 1000
    /// However busy, a session ends this long after its sign-in (ms).
    static let lifetime: Int64 = 12 * 60 * 60 * 1000
    /// A session seen again after this long gets its cookie renewed (its idle time restarts).
    static let renewAfter: Int64 = 60 * 1000

    static func new(tokenDigest: [UInt8], now: Int64) -> ConsoleSession {
        ConsoleSession(tokenDigest: tokenDigest, issuedAt: now, seenAt: now, csrf: AuthContext.randomID(), project: nil)
    }

    /// Whether a form's token is this session's, compared without stopping at the first difference.
    func accepts(csrf given: String?) -> Bool {
        let expected = Array(csrf.utf8)
        guard let given = given.map({ Array($0.utf8) }), given.count == expected.count else { return false }
        return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    func isLive(at now: Int64) -> Bool {
        now - seenAt < Self.idleTimeout && now - issuedAt < Self.lifetime && now >= issuedAt - 60_000
    }

    func sealed(by secrets: SecretSealer) throws -> String {
        var body: [String: JSONValue] = [
            "d": .string(Base64URL.encode(tokenDigest)), "i": .int(issuedAt), "s": .int(seenAt), "c": .string(csrf),
        ]
        body["p"] = project.map(JSONValue.string)
        return Base64URL.encode(try secrets.seal(JSONValue.object(body).encoded(), for: .consoleSession))
    }

    static func opened(_ text: String, by secrets: SecretSealer) throws -> ConsoleSession? {
        guard text.utf8.count <= 1024, let sealed = Base64URL.decode(text),
            let bytes = try secrets.open(sealed, for: .consoleSession), let body = JSONValue.parse(bytes),
            let digest = body["d"]?.stringValue.flatMap({ Base64URL.decode($0) }), case .int(let issuedAt)? = body["i"],
            case .int(let seenAt)? = body["s"], let csrf = body["c"]?.stringValue
        else { return nil }
        return ConsoleSession(
            tokenDigest: digest, issuedAt: issuedAt, seenAt: seenAt, csrf: csrf, project: body["p"]?.stringValue)
    }

    /// The cookie: never readable by a script, sent on no request another site starts, only to
    /// the console's paths; `Secure` when the console is reached over TLS.
    static func cookie(_ value: String, secure: Bool, maxAge: Int64 = ConsoleSession.lifetime / 1000) -> String {
        "\(cookieName)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    /// The request's session cookie, if it sent one.
    static func cookieValue(in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].drop(while: { $0 == " " }) == cookieName { return String(pair[1]) }
        }
        return nil
    }
}
