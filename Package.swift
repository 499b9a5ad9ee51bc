// swift-tools-version:6.2
import PackageDescription

let strictTests: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "hearth",
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        // For apps: a loopback bridge that carries the Firebase SDKs' emulator-mode HTTP to
        // Hearth over verified TLS (issue 29). It depends on SwiftNIO, swift-crypto, swift-log and HearthWire (the wire formats) only.
        .library(name: "HearthBridge", targets: ["HearthBridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-transport-services", from: "1.28.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // liblmdb from the system (Debian: liblmdb-dev); only the LMDB module imports it.
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // libxcrypt from the system (Debian: libcrypt-dev), for imported bcrypt hashes.
        .systemLibrary(name: "CCrypt", pkgConfig: "libxcrypt", providers: [.apt(["libcrypt-dev"])]),
        // OpenSSL 3's libcrypto from the system (Debian: libssl-dev), for RS256 signatures.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // GNU Nettle from the system (Debian: nettle-dev), for AES-256-GCM with kept key
        // schedules (HearthCrypto): a third of OpenSSL's cost per small message.
        .systemLibrary(name: "CNettle", pkgConfig: "nettle", providers: [.apt(["nettle-dev"])]),
        // jemalloc from the system (Debian: libjemalloc-dev) and the options Hearth runs it with,
        // linked by the executable only: it replaces malloc process-wide (the rebuild pipeline
        // frees across threads).
        .systemLibrary(name: "CJemalloc", pkgConfig: "jemalloc", providers: [.apt(["libjemalloc-dev"])]),
        .target(name: "JemallocOptions"),
        .target(name: "LMDB", dependencies: ["CLMDB"], swiftSettings: strict),
        .target(name: "HearthDomain", swiftSettings: strict),
        // The formats on the wire, below everything that parses a request or a config file:
        // JSON (a bounded parser and its value), form encoding, base64url.
        .target(name: "HearthWire", swiftSettings: strict),
        // Randomness (OpenSSL's DRBG, pooled) and AES-256-GCM through Nettle, for the ledger's data
        // keys and the auth services' secrets alike.
        .target(name: "HearthCrypto", dependencies: ["CNettle", "CLibCrypto"], swiftSettings: strict),
        .target(
            name: "HearthLedger",
            dependencies: ["LMDB", "HearthDomain", "HearthCrypto", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .target(
            name: "HearthProjections",
            dependencies: ["LMDB", "HearthDomain", "HearthLedger", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .target(
            name: "HearthStore",
            dependencies: ["LMDB", "HearthDomain", "HearthLedger", "HearthProjections"],
            swiftSettings: strict),
        .target(
            name: "HearthAuth",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthCrypto", "HearthStore", "CCrypt", "CLibCrypto",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // The API's JSON: Firebase's user record, project config, identity-provider and app shapes,
        // and Hearth's cleanup reports; read and written by the HTTP adapter, the configuration
        // loader and the tools alike.
        .target(name: "HearthAPIJSON", dependencies: ["HearthDomain", "HearthWire", "HearthAuth"], swiftSettings: strict),
        .target(
            name: "HearthHTTP",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthAuth", "HearthAPIJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strict),
        // Real identity providers over HTTP (async-http-client): GitHub's OAuth apps and OpenID
        // Connect (discovery, key sets, id_token checks), behind HearthAuth's gateway protocol.
        .target(
            name: "HearthOAuth",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthAuth",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // Email over SMTP (STARTTLS or TLS through NIOSSL): the client and the outgoing queue.
        .target(
            name: "HearthMail",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The loopback bridge (issue 29): plain HTTP on 127.0.0.1 in, verified TLS to Hearth out.
        // NIOSSL and POSIX sockets on Linux; Network.framework (NIOTransportServices) on Apple's
        // platforms, whose system trust store and radios it uses.
        .target(
            name: "HearthBridge",
            dependencies: [
                "HearthWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
                .product(
                    name: "NIOTransportServices", package: "swift-nio-transport-services",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .macCatalyst])),
            ],
            swiftSettings: strict),
        // The 30-day anonymous auto-cleanup: a Service that sleeps until the schedule's next due
        // time and purges through the writer.
        .target(
            name: "HearthScheduler",
            dependencies: [
                "HearthDomain", "HearthStore",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // More than one machine (issue 32): leader election and fencing through etcd's v3 JSON
        // gateway (async-http-client, which HearthOAuth already brings).
        .target(
            name: "HearthCluster",
            dependencies: [
                "HearthDomain", "HearthStore", "HearthWire", "HearthCrypto",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The composition root: configuration, and the daemon's ServiceGroup.
        .target(
            name: "HearthApp",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthStore", "HearthAuth", "HearthAPIJSON", "HearthHTTP", "HearthMail", "HearthScheduler",
                "HearthOAuth", "HearthCluster",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The operator tools: audit, rebuild, demo data, benchmarks, the terminal's progress bars.
        .target(
            name: "HearthTools",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthStore", "HearthScheduler", "HearthAuth", "HearthAPIJSON", "HearthCluster",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "hearth",
            dependencies: [
                "HearthApp", "HearthTools", "HearthDomain", "HearthWire", "HearthStore", "HearthAPIJSON", "HearthAuth",
                "HearthBridge", "HearthCluster",
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .target(name: "CJemalloc", condition: .when(platforms: [.linux])),
                .target(name: "JemallocOptions", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),

        // Test support: temporary data directories, a test clock, and the event dump the
        // test command validates against schemas/.
        .target(
            name: "HearthTesting",
            dependencies: ["LMDB", "HearthDomain", "HearthLedger", "HearthProjections", "HearthStore", "HearthScheduler"],
            swiftSettings: strict),
        // A child process for the crash-safety test: appends under load until SIGKILLed.
        .executableTarget(
            name: "hearth-crash-harness",
            dependencies: [
                "HearthDomain", "HearthStore", "HearthScheduler", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CrashHarness",
            swiftSettings: strict),
        .testTarget(
            name: "HearthToolsTests", dependencies: ["HearthTools", "HearthWire", "HearthTesting"], swiftSettings: strictTests),
        .testTarget(
            name: "HearthWireTests",
            dependencies: ["HearthWire", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthBridgeTests",
            dependencies: [
                "HearthBridge", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthClusterTests",
            dependencies: [
                "HearthCluster", "HearthStore", "HearthDomain", "HearthTesting", .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthCryptoTests",
            dependencies: ["HearthCrypto", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictTests),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "HearthTesting"], swiftSettings: strictTests),
        .testTarget(
            name: "HearthMailTests",
            dependencies: [
                "HearthMail", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthOAuthTests",
            dependencies: [
                "HearthOAuth", "HearthAuth", "HearthDomain", "HearthWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthDomainTests",
            dependencies: [
                "HearthDomain", "HearthTesting", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthLedgerTests",
            dependencies: [
                "LMDB", "HearthDomain", "HearthLedger", "HearthTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthProjectionsTests",
            dependencies: ["LMDB", "HearthDomain", "HearthLedger", "HearthProjections", "HearthStore", "HearthTesting"],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthStoreTests",
            dependencies: [
                "LMDB", "HearthDomain", "HearthLedger", "HearthProjections", "HearthStore", "HearthTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthSchedulerTests",
            dependencies: [
                "HearthDomain", "HearthStore", "HearthScheduler", "HearthTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthAppTests",
            dependencies: [
                "LMDB", "HearthDomain", "HearthLedger", "HearthStore", "HearthApp", "HearthAuth", "HearthMail",
                "HearthTesting", "HearthTools", "HearthWire", "HearthCluster", "HearthHTTP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthAuthTests",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthAuth", "HearthStore", "HearthTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictTests),
        .testTarget(
            name: "HearthHTTPTests",
            dependencies: [
                "HearthDomain", "HearthWire", "HearthStore", "HearthAuth", "HearthHTTP", "HearthApp", "HearthMail",
                "HearthTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // The connection guard's tests drive a real HTTP codec on an embedded channel.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                // The abuse-limit tests' 200 concurrent connections.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The tests' own TOTP generator (HMAC-SHA1), apart from the one under test.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictTests),
    ]
)
