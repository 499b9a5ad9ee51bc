import AsyncHTTPClient
import Foundation
import HearthStore
import NIOCore
import NIOHTTP1

/// `hearth cluster join`'s transfer: the leader's snapshot (`SnapshotSource`) written into an
/// empty data directory, file by file (each to a `.partial` name, fsynced, then renamed), only
/// names a restore accepts (the ledger and key files, never a path). Anything short of the whole
/// stream removes what was written.
public enum SnapshotDownload {
    public struct Summary: Sendable {
        public var files: [BackupFile]
        /// The leader's head when it took the copy.
        public var head: UInt64?
    }

    /// Downloads into `directory` (absent or empty). `progress(received, total)` in bytes.
    public static func download(
        from leaderURL: String, token: String, into directory: String, progress: @escaping (Int, Int) -> Void = { _, _ in }
    ) async throws -> Summary {
        if FileManager.default.fileExists(atPath: directory) {
            guard (try FileManager.default.contentsOfDirectory(atPath: directory)).isEmpty else {
                throw JoinError.notEmpty(directory)
            }
        } else {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var request = HTTPClientRequest(url: leaderURL + "/hearth/v1/cluster/snapshot")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await ClusterHTTP.client.execute(request, timeout: .hours(24))
        guard response.status == .ok else {
            let body = try await response.body.collect(upTo: 4096)
            throw JoinError.refused(status: Int(response.status.code), String(decoding: body.readableBytesView, as: UTF8.self))
        }
        let total = response.headers.first(name: SnapshotSource.bytesHeader).flatMap(Int.init) ?? 0
        let head = response.headers.first(name: SnapshotSource.headHeader).flatMap(UInt64.init)
        var reader = StreamReader(directory: directory)
        do {
            for try await chunk in response.body {
                try reader.consume(chunk.readableBytesView)
                progress(reader.received, total)
            }
            try reader.end()
            try DurableFiles.syncDirectory(of: directory + "/" + DataDirectory.ledgerFileName)
        } catch {
            reader.abandon()
            DataDirectory.discardBackup(in: directory)
            throw error
        }
        return Summary(files: reader.files, head: head)
    }

    /// The stream's frames, parsed as they arrive: a header, then that many bytes into a file.
    struct StreamReader {
        let directory: String
        var header: [UInt8] = []
        var current: (name: String, handle: FileHandle, size: Int, remaining: Int)?
        var files: [BackupFile] = []
        var received = 0

        init(directory: String) { self.directory = directory }

        mutating func consume(_ bytes: ByteBufferView) throws {
            received += bytes.count
            var rest = bytes[...]
            while !rest.isEmpty {
                if let file = current {
                    let taken = rest.prefix(file.remaining)
                    try file.handle.write(contentsOf: Array(taken))
                    rest = rest.dropFirst(taken.count)
                    current?.remaining -= taken.count
                    if current?.remaining == 0 { try close() }
                    continue
                }
                header.append(rest.first!)
                rest = rest.dropFirst()
                try startFileIfHeaderComplete()
            }
        }

        /// A header is its name's length (2 bytes), the name, and the size (8 bytes).
        private mutating func startFileIfHeaderComplete() throws {
            guard header.count >= 2 else { return }
            let nameLength = Int(header[0]) << 8 | Int(header[1])
            guard header.count == 2 + nameLength + 8 else { return }
            let name = String(decoding: header[2..<(2 + nameLength)], as: UTF8.self)
            let size = header[(2 + nameLength)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            header = []
            guard DataDirectory.isRestorable(name), !files.contains(where: { $0.name == name }) else {
                throw JoinError.malformed("the snapshot holds a file named '\(name)', which a data directory does not")
            }
            guard size <= UInt64(Int.max) else { throw JoinError.malformed("\(name) is said to hold \(size) bytes") }
            let path = directory + "/" + name + ".partial"
            // Key files are secrets: readable by the daemon's user alone, as it writes its own.
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileHandle(forWritingAtPath: path)
            else {
                throw JoinError.malformed("could not create \(path)")
            }
            current = (name, handle, Int(size), Int(size))
            if size == 0 { try close() }
        }

        private mutating func close() throws {
            guard let file = current else { return }
            current = nil
            try file.handle.synchronize()
            try file.handle.close()
            let path = directory + "/" + file.name
            guard rename(path + ".partial", path) == 0 else { throw JoinError.malformed("could not rename \(path).partial") }
            files.append(BackupFile(name: file.name, bytes: file.size))
        }

        /// The stream ended: every file it began is whole, and the ledger is among them.
        func end() throws {
            guard current == nil, header.isEmpty else { throw JoinError.malformed("the snapshot ended inside a file") }
            guard files.contains(where: { $0.name == DataDirectory.ledgerFileName }) else {
                throw JoinError.malformed("the snapshot holds no \(DataDirectory.ledgerFileName)")
            }
        }

        mutating func abandon() {
            if let file = current {
                try? file.handle.close()
                unlink(directory + "/" + file.name + ".partial")
                current = nil
            }
        }
    }
}

public enum JoinError: Error, CustomStringConvertible {
    case notEmpty(String)
    case noLeader
    case refused(status: Int, String)
    case malformed(String)

    public var description: String {
        switch self {
        case .notEmpty(let directory): "\(directory) is not empty: a node joins with an empty data directory"
        case .noLeader: "no node leads the cluster now (hearth cluster status): start the first node, or try again"
        case .refused(let status, let reason): "the leader answered \(status): \(reason)"
        case .malformed(let detail): "the snapshot is malformed: \(detail)"
        }
    }
}
