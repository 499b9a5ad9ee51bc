import Foundation
import Logging

/// The notifications the bridge suspends and resumes on: iOS reclaims a suspended app's
/// listening sockets, so the bridge closes its own on the way to the background and listens
/// again, on the same port, on the way back.
public struct BridgeLifecycle: Sendable {
    public var suspend: Notification.Name
    public var resume: Notification.Name

    public init(suspend: Notification.Name, resume: Notification.Name) {
        self.suspend = suspend
        self.resume = resume
    }

    /// UIKit's background and foreground notifications where there is UIKit, else none. By
    /// their names (`UIApplication.didEnterBackgroundNotification`'s raw value): the constants
    /// are main-actor isolated, and the bridge reads them from anywhere.
    public static var platformDefault: BridgeLifecycle? {
        #if os(iOS) || os(tvOS) || os(visionOS) || targetEnvironment(macCatalyst)
        BridgeLifecycle(
            suspend: Notification.Name("UIApplicationDidEnterBackgroundNotification"),
            resume: Notification.Name("UIApplicationWillEnterForegroundNotification"))
        #else
        nil
        #endif
    }
}

/// Turns the notifications into suspend and resume calls, one at a time and in order (a
/// quick background-foreground round trip must not resume before it suspended). Unchecked:
/// the observer tokens (not Sendable on Apple's platforms) are set once, then only removed.
final class LifecycleFollower: @unchecked Sendable {
    private let observers: [any NSObjectProtocol]
    private let continuation: AsyncStream<Bool>.Continuation
    private let worker: Task<Void, Never>

    init(bridge: HearthBridge, names: BridgeLifecycle) {
        let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
        self.continuation = continuation
        let center = NotificationCenter.default
        observers = [
            center.addObserver(forName: names.suspend, object: nil, queue: nil) { _ in continuation.yield(false) },
            center.addObserver(forName: names.resume, object: nil, queue: nil) { _ in continuation.yield(true) },
        ]
        worker = Task { [weak bridge] in
            for await foreground in stream {
                guard let bridge else { return }
                if foreground {
                    do {
                        try await bridge.resume()
                    } catch {
                        bridge.configuration.logger.error("the bridge could not listen again", metadata: ["error": "\(error)"])
                    }
                } else {
                    await bridge.suspend()
                }
            }
        }
    }

    func cancel() {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        continuation.finish()
    }
}
