import HearthAuth
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
    /// A follower's way to its leader's copy of a key file (false on a node that follows no
    /// one); `nil` on a single node.
    let fetch: (@Sendable (String) async throws -> Bool)?
    let logger: Logger

    func run() async throws {
        guard await startsAfter.waitUnlessStopped() else { return }
        await cancelWhenGracefulShutdown {
            var lastFailure: String?
            while !Task.isCancelled {
                do {
                    try await step()
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

    private func step() async throws {
        var refresh = try keyring.refresh(from: store)
        if !refresh.missing.isEmpty, let fetch {
            var fetched = false
            for keyID in refresh.missing { fetched = try await fetch(keyID) || fetched }
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
            for keyID in try await keys.recordDueSteps() {
                logger.error(
                    "abandoned the rotation to key \(keyID): this node leads and does not hold its file (the node that made it is gone); start another"
                )
            }
        }
    }

}
