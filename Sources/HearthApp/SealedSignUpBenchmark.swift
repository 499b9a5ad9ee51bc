import Foundation
import HearthAuth
import HearthStore
import Logging
import ServiceLifecycle
import Synchronization

/// `hearth bench sign-up`: what sealing personal data costs the sign-up PERFORMANCE.md measures
/// (anonymous, durable, an ID token and a refresh token returned, 64 connections), end to end
/// over HTTP. Two servers run in this process, each assembled as `hearth serve` assembles one:
/// one on a store that seals, one on a store that writes as Hearth did before sealing (a store
/// option that no setting reaches). `wrk` drives them in turns, the order flipping each turn,
/// so the host's drift falls on both alike; each first takes a turn that is not counted.
public struct SealedSignUpBenchmark: Sendable {
    public var directory: String
    public var connections = 64
    /// Counted turns on each server.
    public var turns = 8
    public var turnSeconds = 5
    public var signingAlgorithm = SigningKey.Algorithm.es256

    public init(directory: String) { self.directory = directory }

    public struct Result: Sendable {
        /// Sign-ups a second over every counted turn.
        public var sealed: Double
        public var unsealed: Double
        /// Each pair of turns' ratio, sealed to unsealed, in order.
        public var turnRatios: [Double]
    }

    public func run(log: (String) -> Void) async throws -> Result {
        let wrk = try Self.findWrk()
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = directory + "/sign-up.lua"
        try Data("wrk.method = \"POST\"\nwrk.body = \"{}\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n".utf8)
            .write(to: URL(fileURLWithPath: script))

        var logger = Logger(label: "hearth bench")
        logger.logLevel = .critical
        var unsealedOptions = AccountStore.Options()
        unsealedOptions.writesBeforeSealing = true
        let sealed = try server(directory + "/sealed", options: AccountStore.Options(), logger: logger)
        let unsealed = try server(directory + "/unsealed", options: unsealedOptions, logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [sealed.application, unsealed.application], gracefulShutdownSignals: [], logger: logger))
        let serving = Task {
            // A server that fails to start ends the group: no port is then awaited for ever.
            defer {
                sealed.listening.finish()
                unsealed.listening.finish()
            }
            try await group.run()
        }
        defer { serving.cancel() }
        var sealedPorts = sealed.ports.makeAsyncIterator()
        var unsealedPorts = unsealed.ports.makeAsyncIterator()
        guard let sealedPort = await sealedPorts.next(), let unsealedPort = await unsealedPorts.next() else {
            try await serving.value
            throw BenchmarkError.notServing
        }
        let ports = (sealed: sealedPort, unsealed: unsealedPort)
        func url(_ port: Int) -> String { "http://127.0.0.1:\(port)/identitytoolkit.googleapis.com/v1/accounts:signUp?key=bench-key" }
        func turn(_ port: Int, seconds: Int) async throws -> Double {
            try await Self.signUps(wrk: wrk, script: script, url: url(port), connections: connections, seconds: seconds)
        }

        log("an uncounted turn on each server …")
        for port in [ports.sealed, ports.unsealed] { _ = try await turn(port, seconds: 1) }
        var total = (sealed: 0.0, unsealed: 0.0)
        var ratios: [Double] = []
        for index in 0..<turns {
            log("turn \(index + 1) of \(turns): \(turnSeconds) s of sign-ups on each server …")
            var rates = (sealed: 0.0, unsealed: 0.0)
            for sealedNow in index % 2 == 0 ? [true, false] : [false, true] {
                if sealedNow {
                    rates.sealed = try await turn(ports.sealed, seconds: turnSeconds)
                } else {
                    rates.unsealed = try await turn(ports.unsealed, seconds: turnSeconds)
                }
            }
            total.sealed += rates.sealed
            total.unsealed += rates.unsealed
            ratios.append(rates.sealed / rates.unsealed)
        }
        await group.triggerGracefulShutdown()
        try await serving.value
        let count = Double(max(turns, 1))
        return Result(sealed: total.sealed / count, unsealed: total.unsealed / count, turnRatios: ratios)
    }

    /// A server as `hearth serve` assembles it (development profile, loopback, a free port), on
    /// a store opened with `options`; `ports` yields its port once it listens.
    private func server(_ path: String, options: AccountStore.Options, logger: Logger) throws -> (
        application: some Service, ports: AsyncStream<Int>, listening: AsyncStream<Int>.Continuation
    ) {
        var settings = ServerSettings()
        settings.dataDirectory = path
        settings.listen.port = 0
        settings.secrets.signingAlgorithm = signingAlgorithm
        let configuration = try settings.validated()
        let store = try DataDirectory(path).open(as: "hearth bench", options: options, catchUp: false)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        do {
            let assembly = try HearthServer.assemble(
                configuration, store: store, clock: SystemClock(), mailer: nil, logger: logger,
                onListening: { port in
                    listening.yield(port)
                    listening.finish()
                })
            return (assembly.application, ports, listening)
        } catch {
            store.close()
            throw error
        }
    }

    /// Sign-ups a second `wrk` measured in `seconds` on `connections` connections (one thread, as
    /// `Benchmarks/api.py` runs it). A refused sign-up or a connection error ends the benchmark:
    /// a rate of refusals measures nothing. Its output goes to a file and its exit is awaited, so
    /// no thread of the pool the servers run on is blocked meanwhile.
    private static func signUps(wrk: String, script: String, url: String, connections: Int, seconds: Int) async throws -> Double {
        let outputPath = script + ".out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { throw BenchmarkError.loadGenerator("cannot write \(outputPath)") }
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments = ["-t1", "-c\(connections)", "-d\(seconds)s", "--timeout", "5s", "-s", script, url]
        process.standardOutput = output
        process.standardError = output
        let status: Int32 = try await withCheckedThrowingContinuation { exited in
            process.terminationHandler = { exited.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                exited.resume(throwing: error)
            }
        }
        let text = String(decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
        guard status == 0, let rate = Self.number(after: "Requests/sec:", in: text) else { throw BenchmarkError.loadGenerator(text) }
        if text.contains("Non-2xx or 3xx responses:") || text.contains("Socket errors:") { throw BenchmarkError.refused(text) }
        return rate
    }

    private static func number(after label: String, in text: String) -> Double? {
        guard let range = text.range(of: label) else { return nil }
        return Double(text[range.upperBound...].prefix { $0 != "\n" }.trimmingCharacters(in: .whitespaces))
    }

    /// `wrk` on the PATH (`scripts/install-dependencies --tests` installs it).
    private static func findWrk() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/wrk") {
            return "\(directory)/wrk"
        }
        throw BenchmarkError.noWrk
    }

    public enum BenchmarkError: Error, CustomStringConvertible {
        case noWrk
        case notServing
        case loadGenerator(String)
        case refused(String)

        public var description: String {
            switch self {
            case .noWrk: "wrk is not installed (scripts/install-dependencies --tests installs it)"
            case .notServing: "a benchmark server stopped before it listened"
            case .loadGenerator(let output): "wrk failed:\n\(output)"
            case .refused(let output): "sign-ups were refused or connections failed during a turn:\n\(output)"
            }
        }
    }
}
