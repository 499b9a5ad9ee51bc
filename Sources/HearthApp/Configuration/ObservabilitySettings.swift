import HearthWire
import Logging

/// How `hearth serve` logs (metrics and health need no settings: `/metrics`, `/healthz`, `/readyz`).
public struct ObservabilitySettings: Sendable, Equatable {
    public enum LogFormat: String, Sendable, CaseIterable {
        case text, json
    }

    public var logFormat = LogFormat.text
    public var logLevel = Logger.Level.info
    /// How much of a client's address the request, refusal and provider lines keep.
    public var logClientAddresses = ClientAddressLogging.network

    public init() {}
}
