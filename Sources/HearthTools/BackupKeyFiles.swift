import Foundation
import HearthAuth
import HearthDomain
import HearthStore

/// The key files of a backup checked for what they are, not only for their bytes: each
/// signing key parsed and its `kid` compared with the one the (authenticated) manifest
/// records, the secrets key shown to open the client secrets sealed in the backup's ledger,
/// and both compared with the keys of the data directory a restore replaces.
enum BackupKeyFiles {
    /// The JWT `kid` of the signing key in `path` (a file named `signing-key-<alg>.pem`, the
    /// original key, or `signing-key-<kid>.pem`, one a rotation made, which must be that key),
    /// `nil` for any other file.
    static func signingKeyID(of path: String, named name: String) throws -> String? {
        guard name.hasPrefix("signing-key-"), name.hasSuffix(".pem") else { return nil }
        let middle = String(name.dropFirst("signing-key-".count).dropLast(".pem".count))
        let unreadable = BackupError.verificationFailed("\(name) is not a signing key Hearth can read")
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw unreadable }
        if let algorithm = SigningKey.Algorithm(rawValue: middle.uppercased()) {
            guard let key = try? SigningKey(pem: pem, algorithm: algorithm) else { throw unreadable }
            return key.keyID
        }
        guard let key = SigningKey.Algorithm.allCases.lazy.compactMap({ try? SigningKey(pem: pem, algorithm: $0) }).first,
            key.keyID == middle
        else { throw unreadable }
        return key.keyID
    }

    /// Every staged signing key's `kid`, refusing one that differs from the manifest's record.
    static func verifySigningKeys(of manifest: BackupManifest, in staged: String) throws -> [String: String] {
        var keyIDs: [String: String] = [:]
        for file in manifest.files {
            guard let keyID = try signingKeyID(of: staged + "/" + file.name, named: file.name) else { continue }
            if let recorded = file.keyID, recorded != keyID {
                throw BackupError.verificationFailed("\(file.name) in the backup is key \(keyID), its manifest records key \(recorded)")
            }
            keyIDs[file.name] = keyID
        }
        return keyIDs
    }

    /// A secrets key the daemon would refuse at its first use is refused now.
    static func verifySecretsKey(in staged: String) throws {
        let path = staged + "/secrets-key"
        if let bytes = DurableFiles.size(of: path), bytes != 32 {
            throw BackupError.verificationFailed("secrets-key holds \(bytes) bytes, not 32")
        }
    }

    /// Every client secret sealed in the ledger's project settings must open with the backup's
    /// secrets key (AES-GCM: only the key that sealed it opens it).
    static func verifySealedSecrets(in store: AccountStore, secretsKey path: String) throws {
        let sealed = try store.read { reader in
            try reader.configuredProjects().flatMap { project in
                (try reader.recordedConfig(of: project)?.identityProviders ?? []).compactMap { provider -> ClientSecret? in
                    if case .sealed = provider.clientSecret { provider.clientSecret } else { nil }
                }
            }
        }
        guard !sealed.isEmpty else { return }
        // The sealer would create a missing key file.
        guard DurableFiles.exists(path) else {
            throw BackupError.verificationFailed("the ledger holds \(sealed.count) sealed client secrets and the backup no secrets-key")
        }
        let sealer = SecretSealer(keyFile: path)
        for secret in sealed where (try? sealer.open(secret)) == nil {
            throw BackupError.verificationFailed("the backup's secrets-key does not open the client secrets sealed in its ledger")
        }
    }

    /// What a restore changes about the keys of `directory`: said loudly, since tokens signed
    /// by a replaced signing key stop verifying.
    static func changes(from directory: DataDirectory, to staged: String, keyIDs: [String: String]) -> [String] {
        var changes: [String] = []
        for name in directory.keyFileNames {
            let current = directory.path + "/" + name
            guard DurableFiles.exists(staged + "/" + name) else {
                changes.append("\(name) is not in the backup: the data directory's moves aside with the old ledger")
                continue
            }
            if let incoming = keyIDs[name] {
                let replaced = (try? signingKeyID(of: current, named: name)) ?? "unreadable"
                if replaced != incoming {
                    changes.append(
                        "\(name) changes from key \(replaced) to key \(incoming): ID tokens signed by \(replaced) stop verifying")
                }
            } else if (try? BackupManifest.checksum(of: current)) != (try? BackupManifest.checksum(of: staged + "/" + name)) {
                changes.append("\(name) differs from the data directory's: secrets sealed under the replaced key open only with it")
            }
        }
        return changes
    }
}
