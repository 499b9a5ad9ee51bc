import Foundation
import HearthDomain
import HearthStore

/// An `AccountStore` in a temporary data directory, opened (and locked) the way the daemon
/// opens one, with a manual clock. When the test is done (`close`), every event it produced is
/// written as JSON lines to `$HEARTH_EVENT_DUMP_DIR`, where the test command validates them
/// against `schemas/`.
public final class TestStore: Sendable {
    public let directory: TemporaryDirectory
    public let store: AccountStore
    public let clock: ManualClock
    public static let project = ProjectID("test-project")!
    public static let user = Metadata(actor: .endUser, requestId: "test")
    public static let admin = Metadata(actor: .admin, actorId: "owner")

    public init(label: String = "store", clock: ManualClock = ManualClock()) throws {
        directory = TemporaryDirectory(label)
        self.clock = clock
        var options = AccountStore.Options()
        options.clock = clock
        store = try DataDirectory(directory.path).open(as: "test", options: options)
    }

    public var dataDirectory: DataDirectory { DataDirectory(directory.path) }

    /// Dumps the ledger for schema validation, then closes the store.
    public func close() throws {
        try EventDump.write(store)
        store.close()
    }

    @discardableResult
    public func run(_ command: Command, as metadata: Metadata = TestStore.user) throws -> [StoredEvent] {
        try store.executeAndWait(command, metadata: metadata)
    }

    public func account(_ uid: String, project: ProjectID = TestStore.project) throws -> Account? {
        try store.read { try $0.account(UserID(uid)!, in: project) }
    }
}

public enum EventDump {
    /// Appends every event of `store`'s ledger to a new file in `$HEARTH_EVENT_DUMP_DIR`, if set.
    public static func write(_ store: AccountStore) throws {
        guard let directory = ProcessInfo.processInfo.environment["HEARTH_EVENT_DUMP_DIR"], !directory.isEmpty else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var lines: [String] = []
        // Without a uid the replay reads the whole ledger, every project's events.
        try store.audit.replay(StoreAudit.Filter(project: TestStore.project)) { lines.append(try $0.jsonLine()) }
        guard !lines.isEmpty else { return }
        let path = (directory as NSString).appendingPathComponent("\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}
