import HearthDomain

/// A stream's name as `StreamID.description` spells it ("account/<project>/<uid>",
/// "project/<project>", "oob/<project>/<hash>", "cluster/<name>"), in UTF-8 parts: a key or a wrapping context
/// is written without building the string, which a rebuild would do once per account.
struct StreamName {
    private let parts: (category: String, scope: String, id: String?)

    init(_ stream: StreamID) {
        switch stream {
        case .account(let project, let uid): parts = ("account", project.rawValue, uid.rawValue)
        case .project(let project): parts = ("project", project.rawValue, nil)
        case .oobCode(let project, let hash): parts = ("oob", project.rawValue, hash)
        case .cluster(let stream): parts = ("cluster", stream.rawValue, nil)
        }
    }

    /// Bytes in all.
    var count: Int { parts.category.utf8.count + 1 + parts.scope.utf8.count + (parts.id.map { 1 + $0.utf8.count } ?? 0) }

    func forEachPart(_ body: (String) -> Void) {
        body(parts.category)
        body("/")
        body(parts.scope)
        if let id = parts.id {
            body("/")
            body(id)
        }
    }

    var bytes: [UInt8] { bytes(reservingExtra: 0) }

    /// The name's bytes, in an array with room for `extra` more (a key that goes on after it).
    func bytes(reservingExtra extra: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + extra)
        forEachPart { bytes.append(contentsOf: $0.utf8) }
        return bytes
    }
}
