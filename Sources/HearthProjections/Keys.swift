import HearthDomain

/// Projection keys. Every key starts with the project id and a 0 byte, so one project's
/// entries are contiguous; ids never contain 0 bytes (see `UserID`, `ProjectID`).
enum Keys {
    static func project(_ project: ProjectID) -> [UInt8] {
        Array(project.rawValue.utf8) + [0]
    }

    static func account(_ project: ProjectID, _ uid: UserID) -> [UInt8] {
        self.project(project) + Array(uid.rawValue.utf8)
    }

    static func email(_ project: ProjectID, _ email: String) -> [UInt8] {
        self.project(project) + Array(email.utf8)
    }

    static func phone(_ project: ProjectID, _ phone: String) -> [UInt8] {
        self.project(project) + Array(phone.utf8)
    }

    static func federated(_ project: ProjectID, _ providerId: String, _ federatedId: String) -> [UInt8] {
        self.project(project) + Array(providerId.utf8) + [0] + Array(federatedId.utf8)
    }

    static func oobCode(_ project: ProjectID, _ codeHash: String) -> [UInt8] {
        self.project(project) + Array(codeHash.utf8)
    }

    /// Cleanup schedule: ordered by due time within a project.
    static func cleanup(_ project: ProjectID, dueAt: Int64, _ uid: UserID) -> [UInt8] {
        var key = self.project(project)
        withUnsafeBytes(of: UInt64(bitPattern: dueAt).bigEndian) { key.append(contentsOf: $0) }
        return key + Array(uid.rawValue.utf8)
    }

    static func cleanupPrefixLength(_ project: ProjectID) -> Int { project.rawValue.utf8.count + 1 + 8 }
}
