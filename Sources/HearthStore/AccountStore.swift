#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

/// The event-sourced account store: the write path of DESIGN.md in one place.
///
/// `execute` sends a command to the environment's writer thread, which, inside the batch's
/// one transaction, reads state from the projections, runs the pure `decide`, appends the
/// events to the ledger and folds them into the projections. A refused command (an
/// `AuthError`, a wrong expected version) writes nothing and fails alone; its batch commits.
public final class AccountStore: Sendable {
    public let environment: Environment
    public let ledger: Ledger
    public let projections: Projections
    public let clock: any WallClock

    public struct Options: Sendable {
        public var environment = EnvironmentOptions()
        public var clock: any WallClock = SystemClock()

        public init() {}

        public static var readOnly: Options {
            var options = Options()
            options.environment.readOnly = true
            return options
        }
    }

    /// Opens the store in `directory`, creating it if needed. A writable store first brings the
    /// projections up to the ledger's head (normally nothing to do: they commit together).
    public init(directory: String, options: Options = Options()) throws {
        if options.environment.readOnly && access(directory + "/data.mdb", F_OK) != 0 {
            throw StoreError.noLedger(directory: directory)
        }
        environment = try Environment(path: directory, options: options.environment)
        do {
            ledger = try Ledger.open(environment)
            projections = try Projections.open(environment)
        } catch {
            environment.close()
            throw error
        }
        clock = options.clock
        if !options.environment.readOnly {
            try maintenance.catchUp()
        }
    }

    public var maintenance: ProjectionMaintenance {
        ProjectionMaintenance(environment: environment, ledger: ledger, projections: projections)
    }

    public func close() { environment.close() }

    /// Decides, appends and projects one command; returns the events it recorded.
    @discardableResult
    public func execute(
        _ command: Command, expecting expected: ExpectedVersion = .any, metadata: Metadata
    ) async throws -> [EventEnvelope] {
        try await environment.writer.submit { [self] txn in try job(txn) { try run(command, expected, metadata, $0) } }
    }

    /// `execute` for synchronous callers (tools, tests); blocks the calling thread.
    @discardableResult
    public func executeAndWait(
        _ command: Command, expecting expected: ExpectedVersion = .any, metadata: Metadata
    ) throws -> [EventEnvelope] {
        try environment.writer.perform { [self] txn in try job(txn) { try run(command, expected, metadata, $0) } }
    }

    /// Runs many commands in one transaction (imports, bulk tools). Each refused command fails
    /// alone, with its error in the result; the others commit together.
    public func executeAll(_ commands: [Command], metadata: Metadata) async throws -> [Result<[EventEnvelope], any Error>] {
        try await environment.writer.submit { [self] txn in
            try job(txn) { writer in
                try commands.map { command in
                    let writes = txn.writeCount
                    do {
                        return .success(try run(command, .any, metadata, writer))
                    } catch {
                        // Only a command that wrote nothing may fail alone inside a shared
                        // transaction; anything else fails the whole job, which the writer rolls back.
                        if txn.writeCount != writes { throw error }
                        return .failure(error)
                    }
                }
            }
        }
    }

    /// Runs `body` on the writer thread inside one transaction: it reads state and executes
    /// commands that may span several streams (consume a code, then sign in). All or nothing:
    /// if `body` throws after a command wrote, the writer rolls the whole job back.
    public func transaction<R: Sendable>(
        metadata: Metadata, _ body: @escaping @Sendable (StoreTransaction) throws -> R
    ) async throws -> R {
        try await environment.writer.submit { [self] txn in
            try job(txn) { writer in try body(StoreTransaction(store: self, writer: writer, metadata: metadata)) }
        }
    }

    /// One write job: its commands fold into one projection writer, which serves their reads of
    /// accounts and writes each account they changed back once, at the end.
    private func job<R>(_ txn: WriteTransaction, _ body: (ProjectionWriter) throws -> R) throws -> R {
        let writer = projections.writer(txn)
        let result = try body(writer)
        try writer.flush()
        return result
    }

    fileprivate func run(_ command: Command, _ expected: ExpectedVersion, _ metadata: Metadata, _ writer: ProjectionWriter)
        throws -> [EventEnvelope]
    {
        let now = clock.now()
        let payloads = try Decide.decide(command, state: WriteState(writer), now: now)
        let envelopes = try ledger.append(
            payloads, to: command.stream, expecting: expected, metadata: metadata, at: now, in: writer.txn)
        for envelope in envelopes { try writer.apply(envelope) }
        return envelopes
    }

    /// The ledger's last sequence number and hash.
    public func ledgerHead() throws -> Ledger.Head {
        try environment.read { try ledger.head(in: $0) }
    }

    /// Runs `body` on the projections in a read snapshot.
    public func read<R>(_ body: (ProjectionReader<ReadTransaction>) throws -> R) throws -> R {
        try environment.read { txn in try body(projections.reader(txn)) }
    }
}

/// The view a `transaction` body gets: state as of the commands run so far, and `execute`.
public struct StoreTransaction {
    fileprivate let store: AccountStore
    fileprivate let writer: ProjectionWriter
    public let metadata: Metadata

    /// The projections, including what earlier commands of this transaction did.
    public var state: WriteState { WriteState(writer) }

    public var now: Int64 { store.clock.now() }

    @discardableResult
    public func execute(_ command: Command, expecting expected: ExpectedVersion = .any) throws -> [EventEnvelope] {
        try store.run(command, expected, metadata, writer)
    }
}

public enum StoreError: Error, Equatable, CustomStringConvertible {
    case noLedger(directory: String)

    public var description: String {
        switch self {
        case .noLedger(let directory): "no Hearth ledger in \(directory) (data.mdb not found)"
        }
    }
}
