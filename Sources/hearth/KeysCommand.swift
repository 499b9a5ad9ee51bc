import ArgumentParser
import HearthWire

/// `hearth keys status|rotate`: the signing keys, through the running daemon (in a cluster, any
/// node: a rotation is a write, which a follower forwards to its leader).
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or rotate the signing keys (through the running daemon; the operator's credential).",
        subcommands: [Status.self, Rotate.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The key signing, the keys the JWKS publishes, and a rotation under way (its key and when it signs).")

        @OptionGroup var daemon: DaemonOptions

        func run() throws {
            try daemon.print(try daemon.call("GET", "/hearth/v1/keys", nil))
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a rotation: a new key, published at once, signing after the overlap; the old one withdrawn later.",
            discussion: """
                Each step is an event in the ledger, recorded by the leader when due: the new key is in the JWKS from \
                now on; it signs after --overlap-seconds (default 3600, the JWKS's max-age, so verifiers that cache the \
                JWKS have it first); the key it replaces leaves the JWKS --retire-after-seconds after that (default \
                1209900: a session cookie's two weeks and the five minutes of clock skew verifiers allow). Shorter \
                periods are for a key you must stop using now: what it signed stops verifying once it is withdrawn, \
                and verifiers that cached the JWKS refuse the new key's tokens until they fetch it again. One rotation \
                at a time.
                """)

        @OptionGroup var daemon: DaemonOptions
        @Option(help: "Seconds between publishing the new key and signing with it (0 to 2592000).") var overlapSeconds: Int?
        @Option(help: "Seconds the replaced key stays in the JWKS once the new one signs (0 to 2592000).") var retireAfterSeconds: Int?

        func run() throws {
            var body: [String: JSONValue] = [:]
            if let overlapSeconds { body["overlapSeconds"] = .int(Int64(overlapSeconds)) }
            if let retireAfterSeconds { body["retireAfterSeconds"] = .int(Int64(retireAfterSeconds)) }
            try daemon.print(try daemon.call("POST", "/hearth/v1/keys/rotate", .object(body)))
        }
    }
}
