import Foundation
import HearthAuth
import HearthDomain
import HearthMail
import HearthWire

/// Action emails: where their links point, how long their codes live, who sends them and
/// through which SMTP relay.
public struct MailSettings: Sendable, Equatable {
    /// The app's action handler that email links point at (production needs it for links).
    public var actionUrl: String?
    /// One number of seconds for every type, or an object by request type.
    public var actionCodeLifetimeSeconds: JSONValue?
    /// What emails call the app (Firebase's %APP_NAME%); the project id when unset.
    public var appName: String?
    public var from: String?
    public var fromName: String?
    public var smtpHost: String?
    /// 587 for STARTTLS, 465 for TLS, 25 without, unless set.
    public var smtpPort: Int?
    public var smtpSecurity = SMTPSettings.Security.startTLS
    public var smtpUsername: String?
    public var smtpPassword: String?
    /// A PEM bundle trusted besides the system's roots (a private relay's CA).
    public var smtpTrustRoots: String?

    public init() {}

    public struct Valid: Sendable, Equatable {
        public let actionURL: String?
        /// Milliseconds by request type (types not named keep the default).
        public let actionCodeLifetimes: [OOBCodeIssued.RequestType: Int64]
        /// The relay and the sender, when mail is configured.
        public let smtp: SMTPSettings?
        public let from: String?
        public let fromName: String?
        public let appName: String?
    }

    func validated(_ profile: Profile) throws -> Valid {
        if let actionUrl {
            guard let url = URL(string: actionUrl), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil
            else { throw ConfigurationError.invalid("actionUrl", source: actionUrl) }
        }
        return Valid(
            actionURL: actionUrl, actionCodeLifetimes: try actionCodeLifetimes(), smtp: try smtp(profile), from: from,
            fromName: fromName, appName: appName)
    }

    private func smtp(_ profile: Profile) throws -> SMTPSettings? {
        guard let smtpHost else { return nil }
        guard !smtpHost.isEmpty else { throw ConfigurationError.invalid("smtpHost", source: "empty") }
        guard let from, (try? Validation.email(from)) != nil else {
            throw ConfigurationError.invalid("mailFrom (needed with smtpHost)", source: from ?? "unset")
        }
        if let smtpPort, !(1...65535).contains(smtpPort) {
            throw ConfigurationError.invalid("smtpPort", source: "\(smtpPort)")
        }
        if let smtpTrustRoots, !FileManager.default.isReadableFile(atPath: smtpTrustRoots) {
            throw ConfigurationError.unreadable(smtpTrustRoots)
        }
        // Production emails would carry links to nowhere: /emulator/action is off there.
        if profile == .production && actionUrl == nil {
            throw ConfigurationError.invalid("actionUrl (production mail needs it)", source: "unset")
        }
        let defaultPort =
            switch smtpSecurity {
            case .startTLS: 587
            case .tls: 465
            case .none: 25
            }
        return SMTPSettings(
            host: smtpHost, port: smtpPort ?? defaultPort, security: smtpSecurity, username: smtpUsername,
            password: smtpPassword, trustRootsFile: smtpTrustRoots, clientName: ProcessInfo.processInfo.hostName)
    }

    private func actionCodeLifetimes() throws -> [OOBCodeIssued.RequestType: Int64] {
        func milliseconds(_ value: JSONValue, _ name: String) throws -> Int64 {
            guard case .int(let seconds) = value, (60...30 * 86_400).contains(seconds) else {
                throw ConfigurationError.invalid("\(name) (60 to 2592000 seconds)", source: value.text)
            }
            return seconds * 1000
        }
        switch actionCodeLifetimeSeconds {
        case nil: return [:]
        case .int?:
            let every = try milliseconds(actionCodeLifetimeSeconds!, "actionCodeLifetimeSeconds")
            return Dictionary(uniqueKeysWithValues: OOBCodeIssued.RequestType.allCases.map { ($0, every) })
        case .object(let byType)?:
            var lifetimes: [OOBCodeIssued.RequestType: Int64] = [:]
            for (name, value) in byType {
                guard let type = OOBCodeIssued.RequestType(rawValue: name) else {
                    throw ConfigurationError.invalid("actionCodeLifetimeSeconds: unknown request type", source: name)
                }
                lifetimes[type] = try milliseconds(value, "actionCodeLifetimeSeconds.\(name)")
            }
            return lifetimes
        default:
            throw ConfigurationError.invalid("actionCodeLifetimeSeconds", source: "a number or an object by request type")
        }
    }
}
