import HearthAuth
import HearthDomain
import HearthScheduler
import HearthStore
import Logging
import ServiceLifecycle

/// Keeps this node's signing keys with the ledger, once a second: the keyring follows the
/// rotation steps recorded or replicated; a follower fetches from its leader the file of a key
/// it lacks (`fetch`); the node that may write records the steps that fell due (a key's
/// activation after its overlap, a replaced key's withdrawal).
struct SigningKeyService: Service {
    let keys: KeyService
    let keyring: SigningKeyring
    let store: AccountStore
    let startsAfter: StartSignal
    /// How a node gets a key file it lacks: a follower from its leader, a leader from any node
    /// holding it; whether it now holds it, or another node still may (`ClusterNode`). `nil`
    /// on a single node.
    let fetch: (@Sendable (String) async throws -> KeyFileAvailability)?
    let logger: Logger

    func run() async throws {
        guard await startsAfter.waitUnlessStopped() else { return }
        await cancelWhenGracefulShutdown {
            var lastFailure: String?
            // Rotations whose wait for a key file was logged (once each).
            var waits: Set<String> = []
            while !Task.isCancelled {
                do {
                    try await step(waits: &waits)
                    lastFailure = nil
                } catch StoreError.notLeader, StoreError.notReplicated {
                    // Another node records the steps; or a follower has yet to confirm them.
                } catch {
                    let reason = "\(error)"
                    if reason != lastFailure { logger.error("keeping the signing keys failed", metadata: ["error": "\(reason)"]) }
                    lastFailure = reason
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func step(waits: inout Set<String>) async throws {
        var refresh = try keyring.refresh(from: store)
        // Keys whose file another node may still hold: a leader waits for them rather than abandon.
        var sought: Set<String> = []
        if !refresh.missing.isEmpty, let fetch {
            var fetched = false
            for keyID in refresh.missing {
                switch try await fetch(keyID) {
                case .held:
                    fetched = true
                    logger.notice("fetched the file of signing key \(keyID) from another node")
                case .sought: sought.insert(keyID)
                case .lost: break
                }
            }
            if fetched {
                let again = try keyring.refresh(from: store)
                refresh.missing = again.missing
                if let changed = again.signingChanged { refresh.signingChanged = changed }
            }
        }
        for keyID in refresh.orphansRemoved {
            logger.warning("removed the file of signing key \(keyID): no ledger record names it (a rotation that never committed)")
        }
        if let signing = refresh.signingChanged {
            logger.notice("signing with key \(signing ?? "none: it is being fetched")", metadata: ["missing": "\(refresh.missing)"])
        }
        if (try? store.writeAuthority.check()) != nil {
            let undone = try await keys.recordDueSteps(sought: sought)
            for keyID in undone.abandoned {
                logger.error(
                    "abandoned the rotation to key \(keyID): this node leads and no node it could ask holds its file (the node that made it is gone); start another"
                )
            }
            for keyID in undone.waiting where waits.insert(keyID).inserted {
                logger.warning(
                    "the rotation to key \(keyID) is due, but this node lacks its file and a registered node that may hold it has not answered: the replaced key signs until one does"
                )
            }
        }
    }

}
