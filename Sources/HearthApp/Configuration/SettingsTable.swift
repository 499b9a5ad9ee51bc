import HearthAuth
import HearthMail
import HearthWire

/// Every setting `hearth serve` reads, in the order the reference lists them (and the order a
/// file's keys are applied in). `docs/configuration.md`'s table is generated from this list
/// (`hearth settings --markdown`), and a test keeps the two equal.
public enum SettingsTable {
    public static let settings: [Setting] = [
        // The two every other section depends on.
        .choice(
            "profile", .server, \.profile, default: "`development`",
            "`development` (the Auth Emulator's conveniences, loopback only) or `production`"),
        .text("dataDirectory", .server, \.dataDirectory, default: "`.hearth/data`", "the LMDB environment and the signing key"),

        .text("host", .listen, \.listen.host, default: "`127.0.0.1`", "the address to listen on"),
        .integer("port", .listen, \.listen.port, default: "`9099`", "the port to listen on (`0`: any free port)"),
        .flag(
            "insecureDevelopmentOnNetwork", .listen, \.listen.insecureDevelopmentOnNetwork,
            "let the development profile listen off loopback (also `--insecure-development-on-network`); anyone who reaches it is then admin. Logs a warning at every start"
        ),
        .flag(
            "insecurePlainHttpOnNetwork", .listen, \.listen.insecurePlainHttpOnNetwork,
            "let the production profile serve plain HTTP on an address other machines reach (a TLS proxy on another host, over a network that is yours); without it production listens on loopback only, behind a TLS proxy on the same machine. Logs a warning at every start"
        ),
        .text(
            "publicUrl", .listen, \.listen.publicUrl, default: "the request's host (development)",
            "this server as browsers and identity providers reach it (`https://auth.example.com`); providers call back `<publicUrl>/__/auth/handler`"
        ),
        .list(
            "trustedProxies", .listen, \.listen.trustedProxies,
            "addresses or CIDR ranges of your reverse proxies: only a connection from one of them may name the client in `X-Forwarded-For`; without any, the TCP peer is the client"
        ),
        .flag(
            "disableConsole", .listen, \.listen.disableConsole,
            "turn the console (`/console`) off: it is then not served at all. On, it is open on loopback in development and behind sign-in with an admin token in production"
        ),
        .flag(
            "developmentBrowserAdmin", .listen, \.listen.developmentBrowserAdmin,
            "development only: accept the emulator's admin credentials (`Bearer owner`, `ya29.…`) from web pages (requests with an `Origin`), and grant private-network access to pages on public origins. Off, any site a developer visits could otherwise read their local accounts, password hashes included"
        ),

        .integer(
            "idleTimeoutSeconds", .limits, \.limits.idleTimeoutSeconds, default: "`60`",
            "a connection silent this long, between requests or mid-request, is closed"),
        .integer(
            "requestTimeoutSeconds", .limits, \.limits.requestTimeoutSeconds, default: "`10`",
            "a request (head and body) must arrive within this many seconds of its first byte, plus a second per `requestMinBytesPerSecond` received; otherwise `408` and the connection closes"
        ),
        .integer(
            "requestMinBytesPerSecond", .limits, \.limits.requestMinBytesPerSecond, default: "`1024`",
            "the rate that earns a slow request another second"),
        .integer(
            "requestTimeoutMaxSeconds", .limits, \.limits.requestTimeoutMaxSeconds, default: "`60`",
            "no request takes longer than this to arrive, however fast it trickles (at least `requestTimeoutSeconds`)"),
        .integer(
            "maxConnections", .limits, \.limits.maxConnections,
            default: "the descriptor limit less those open at start and a reserve of 64",
            "connections served at once; past it the listener stops accepting and clients wait in the backlog. A larger value is lowered to that, with a warning"
        ),
        .integer(
            "maxConnectionsPerAddress", .limits, \.limits.maxConnectionsPerAddress, default: "`256`",
            "connections one client address (an IPv6 client's /64) may hold, and never more than an eighth of the connections still free; further ones from it are closed as they open. `trustedProxies` are not limited"
        ),
        .integer(
            "maxBufferedRequestBytes", .limits, \.limits.maxBufferedRequestBytes, default: "`67108864` (64 MiB; at least 4 MiB)",
            "bytes of requests received and not yet answered, over every connection; a request that would go past it, or past its address's share (an eighth of what is free), is answered `503 UNAVAILABLE` with `Retry-After: 2` and its connection closed. A request's bytes past its first 64 KiB may use only three quarters of the budget"
        ),
        .integer(
            "requestHeadTimeoutSeconds", .limits, \.limits.requestHeadTimeoutSeconds, default: "`10`",
            "a new connection that has not sent a whole request head this long after it opened gets `408` and is closed"),
        .json(
            "limits", .limits, \.limits.abuse, default: "the defaults in production; none in development",
            "the abuse limits: `false`, or an object of the limits to change, with `\"enabled\": false` to turn them off, `hashQueuePerAddress`, and `\"projects\": {\"<id>\": {…}}` for a project's own"
        ),

        .integer("scryptLogN", .passwords, \.passwords.scryptLogN, default: "`14`", "password hashing cost: scrypt's log2 N (10 to 18)"),
        .integer("scryptBlockSize", .passwords, \.passwords.scryptBlockSize, default: "`8`", "scrypt's block size r"),
        .integer(
            "scryptParallelization", .passwords, \.passwords.scryptParallelization, default: "`1`", "scrypt's parallelization p"),
        .integer(
            "hashThreads", .passwords, \.passwords.hashThreads, default: "the CPU count",
            "threads that hash passwords: at most this many hashes run at once"),

        Setting(
            key: "adminTokens", section: .secrets, kind: .list, defaultValue: "none",
            summary:
                "bearer tokens accepted as admin, for every project (the **operator's**); an entry `{\"token\": \"…\", \"projects\": [\"p1\"]}` or `{\"tokenFile\": \"/run/credentials/hearth/p1\", \"projects\": [\"p1\"]}` only for the projects it names (a **project admin's**), `\"name\": \"tenant-a\"` what events record as the actor. At least 32 characters with 8 different ones, never a published default such as `owner`"
        ) { settings, value, source in
            let setting = SettingValue("adminTokens", value, source)
            guard let items = value.arrayValue else { throw setting.invalid }
            settings.secrets.adminTokens = try items.flatMap { try SecretSettings.adminCredentials($0, source: source) }
        },
        Setting(
            key: "adminTokenFile", section: .secrets, kind: .text, defaultValue: "none",
            summary: "a file of admin tokens for every project, one a line (systemd `LoadCredential=`)"
        ) { settings, value, source in
            let path = try SettingValue("adminTokenFile", value, source).text()
            settings.secrets.adminTokenFileTokens = try SecretSettings.credentialLines(path).map { AdminCredential(token: $0) }
        },
        .list(
            "customTokenKeys", .secrets, \.secrets.customTokenKeys,
            "PEM public keys (files) that may sign custom tokens: your backend's service-account key. Production accepts custom tokens only with one"
        ),
        .choice(
            "signingAlgorithm", .secrets, \.secrets.signingAlgorithm, default: "`RS256`", normalized: { $0.uppercased() },
            "how ID tokens are signed: `RS256` or `ES256`"),

        .text("project", .projects, \.projects.project, default: "`demo-hearth`", "the default project"),
        Setting(
            key: "apiKeys", section: .projects, kind: .json, defaultValue: "none",
            summary: "production: `{\"<api key>\": \"<project id>\"}` (required there)"
        ) { settings, value, source in
            let setting = SettingValue("apiKeys", value, source)
            settings.projects.apiKeys = try setting.object().mapValues { project in
                guard let id = project.stringValue else { throw setting.invalid }
                return id
            }
        },
        .object(
            "projects", .projects, \.projects.declared,
            "`{\"<project id>\": {<Config JSON>}}`: each project's settings in the v2 config's shape, and its `defaultSupportedIdpConfigs` / `oauthIdpConfigs` (provider id -> the v2 provider config, the secret as `clientSecretFile`), recorded at the first start that finds none"
        ),
        .integer(
            "recentSignInSeconds", .projects, \.projects.recentSignInSeconds,
            default: "`300` in production, `0` (off) in development",
            "how recently a session must have signed in to change its email or password, delete its account or link a credential (`CREDENTIAL_TOO_OLD_LOGIN_AGAIN` otherwise); `0` turns the rule off"
        ),

        .object(
            "identityProviders", .providers, \.providers.endpoints, default: "the providers' public endpoints",
            "endpoint overrides per provider: `{\"github.com\": {\"webUrl\", \"apiUrl\"}, \"yahoo.com\": {\"issuer\"}}`"),
        .integer(
            "providerTimeoutSeconds", .providers, \.providers.timeoutSeconds, default: "`10`",
            "the deadline of every call to an identity provider"),
        .list(
            "providerAllowedNetworks", .providers, \.providers.allowedNetworks, default: "none (development: loopback)",
            "addresses or CIDR ranges beyond the public internet where identity providers may be reached, plain `http` included; everything else must be a public address over https"
        ),
        .list(
            "providerAllowedHosts", .providers, \.providers.allowedHosts,
            "hosts (`login.example.com`, or `*.example.com`) an `oidc.*` issuer's discovery document may name for its endpoints besides the issuer's own host"
        ),
        .text(
            "secretFilesDirectory", .providers, \.providers.secretFilesDirectory, default: "systemd's `$CREDENTIALS_DIRECTORY`",
            "the only place a provider's `clientSecretFile` may point when the operator's token sets it through the API (the config file's own entries may point anywhere); a project admin's token can not name a file at all"
        ),

        .text(
            "actionUrl", .mail, \.mail.actionUrl, default: "this server's `/emulator/action` (development)",
            "your app's email action handler: where reset, verification and sign-in links point (production needs it for links)"),
        .json(
            "actionCodeLifetimeSeconds", .mail, \.mail.actionCodeLifetimeSeconds, default: "6 hours for each",
            "how long action codes stay valid: one number, or seconds by request type (`{\"PASSWORD_RESET\": 3600}`), each 60 to 2592000"
        ),
        .text("appName", .mail, \.mail.appName, default: "the project id", "what emails call your app (Firebase's `%APP_NAME%`)"),
        .text("mailFrom", .mail, \.mail.from, default: "none (required with `smtpHost`)", "the sender's address"),
        .text("mailFromName", .mail, \.mail.fromName, default: "`appName`", "the sender's name"),
        .text(
            "smtpHost", .mail, \.mail.smtpHost, default: "none",
            "the SMTP relay that sends action emails; without it development keeps links in its outbox and production sends none"),
        .integer("smtpPort", .mail, \.mail.smtpPort, default: "587, 465 or 25 by `smtpSecurity`", "the relay's port"),
        .choice(
            "smtpSecurity", .mail, \.mail.smtpSecurity, default: "`starttls`", normalized: { $0.lowercased() },
            "`starttls` (required before anything else is said), `tls` (from the first byte) or `none` (a relay on loopback)"),
        .text("smtpUsername", .mail, \.mail.smtpUsername, default: "none", "AUTH PLAIN (or LOGIN) with the relay"),
        .text("smtpPassword", .mail, \.mail.smtpPassword, default: "none", "the relay's password"),
        Setting(
            key: "smtpPasswordFile", section: .mail, kind: .text, defaultValue: "none",
            summary: "the relay's password as a file's first line (systemd `LoadCredential=`)"
        ) { settings, value, source in
            let path = try SettingValue("smtpPasswordFile", value, source).text()
            settings.mail.smtpPassword = try SecretSettings.credentialLines(path).first ?? ""
        },
        .text(
            "smtpTrustRoots", .mail, \.mail.smtpTrustRoots, default: "the system's roots",
            "a PEM file of extra CAs for the relay's certificate"),

        .integer(
            "cleanupBatchSize", .cleanup, \.cleanup.batchSize, default: "`1024`",
            "anonymous accounts the 30-day cleanup purges in one write (1 to 100000); between batches, sign-ups get the writer"),

        .choice(
            "logFormat", .observability, \.observability.logFormat, default: "`text`",
            "`text` (one line per entry) or `json` (one object per line, for a log shipper)"),
        .choice(
            "logLevel", .observability, \.observability.logLevel, default: "`info`",
            "`trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`"),
        .choice(
            "logClientAddresses", .observability, \.observability.logClientAddresses, default: "`network`",
            "how much of a client's IP address log lines keep (it is personal data): `network` (IPv4 /24, IPv6 /48), `full`, or `none`"),

        Setting(
            key: "cluster", section: .cluster, kind: .json, defaultValue: "none: one node",
            summary:
                "this node's cluster (docs/cluster.md): `{\"name\": \"auth\", \"node\": \"n1\", \"etcd\": [\"http://10.0.0.5:2379\"], \"advertiseUrl\": \"http://10.0.0.2:9099\", \"replicationTokenFile\": \"/run/credentials/hearth.service/replication\", \"leaseSeconds\": 5}`; names of 1 to 63 letters, digits, `.`, `_`, `-`, unique in the cluster; the token file's first line (at least 32 characters) the same on every node; `leaseSeconds` 2 to 60; `synchronousFollowers` (0 to 8, default 1) followers must hold a write on disk before it is acknowledged (0: asynchronous, a failover may lose the latest writes); a write they do not confirm within `synchronousTimeoutSeconds` (1 to 300, default 10) is answered 503, and the leader then refuses writes until they confirm it"
        ) { settings, value, source in
            settings.cluster.object = try SettingValue("cluster", value, source).object()
        },
    ]

    static let byKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })

    /// The reference table in Markdown, a section at a time.
    public static func markdown() -> String {
        var lines: [String] = []
        for section in Setting.Section.allCases {
            let rows = settings.filter { $0.section == section }
            guard !rows.isEmpty else { continue }
            lines += ["", "### \(section.rawValue)", "", "| key | environment | value | default | meaning |", "|---|---|---|---|---|"]
            for row in rows {
                lines.append(
                    "| `\(row.key)` | `\(row.environmentName)` | \(row.kind.described) | \(row.defaultValue) | \(row.summary) |")
            }
        }
        return lines.dropFirst().joined(separator: "\n") + "\n"
    }
}
