import Foundation
import HearthDomain
import HearthWire

/// What an app's ActionCodeSettings say besides `continueUrl`: whether the app opens the link
/// itself, its iOS and Android identities, and the domain the link is served on.
public struct AppLinkSettings: Sendable, Equatable {
    public var canHandleCodeInApp = false
    public var iOSBundleId: String?
    public var iOSAppStoreId: String?
    public var androidPackageName: String?
    public var androidInstallApp = false
    public var androidMinimumVersion: String?
    /// A Hosting link domain (`linkDomain`), or the older Dynamic Links one (`dynamicLinkDomain`).
    public var linkDomain: String?
    public var dynamicLinkDomain: String?

    public init() {}

    /// Firebase's checks, in its order. `continueUrl` must name an authorized domain (apps and
    /// admins alike: a link elsewhere would hand the code to another site), sign-in links need
    /// one and must be opened in the app, mobile settings need the app's identity, and a link
    /// domain must be one the project configured. Returns the domain the link is served on.
    func check(_ continueUrl: String?, for type: OOBCodeIssued.RequestType, _ config: ProjectConfig) throws -> String? {
        if type == .emailSignIn {
            guard let continueUrl, !continueUrl.isEmpty else { throw FirebaseError.bad("MISSING_CONTINUE_URI") }
            guard canHandleCodeInApp else {
                throw FirebaseError.bad("INVALID_ARGUMENT : canHandleCodeInApp must be true for EMAIL_SIGNIN links")
            }
        }
        if let continueUrl {
            let host = try Validation.continueURL(continueUrl).host ?? ""
            guard config.authorizes(host: host) else { throw FirebaseError.bad("UNAUTHORIZED_DOMAIN : Domain not allowlisted by project") }
        }
        if iOSAppStoreId != nil && (iOSBundleId ?? "").isEmpty { throw FirebaseError.bad("MISSING_IOS_BUNDLE_ID") }
        if (androidInstallApp || androidMinimumVersion != nil) && (androidPackageName ?? "").isEmpty {
            throw FirebaseError.bad("MISSING_ANDROID_PACKAGE_NAME")
        }
        if let linkDomain {
            guard config.linkDomains.contains(linkDomain.lowercased()) else { throw FirebaseError.bad("INVALID_HOSTING_LINK_DOMAIN") }
            return linkDomain.lowercased()
        }
        if let dynamicLinkDomain {
            guard config.linkDomains.contains(dynamicLinkDomain.lowercased()) else {
                throw FirebaseError.bad("INVALID_DYNAMIC_LINK_DOMAIN")
            }
            return dynamicLinkDomain.lowercased()
        }
        return canHandleCodeInApp ? config.linkDomains.first : nil
    }

    /// The link an app opens itself: served on `domain` (where the app's universal links and
    /// App Links point), carrying the app's identities as Firebase's links do (`ibi`, `apn`,
    /// `amv`). A link for the web is the action handler's, as it is.
    func shape(_ link: String, domain: String?) -> String {
        guard canHandleCodeInApp, var components = URLComponents(string: link) else { return link }
        if let domain {
            components.scheme = "https"
            components.host = domain
            components.port = nil
        }
        var parameters: [(String, String)] = []
        if let iOSBundleId, !iOSBundleId.isEmpty { parameters.append(("ibi", iOSBundleId)) }
        if let androidPackageName, !androidPackageName.isEmpty {
            parameters.append(("apn", androidPackageName))
            if let androidMinimumVersion { parameters.append(("amv", androidMinimumVersion)) }
        }
        let query = [components.percentEncodedQuery, parameters.isEmpty ? nil : FormEncoding.encode(parameters)]
        components.percentEncodedQuery = query.compactMap { $0 }.joined(separator: "&")
        return components.string ?? link
    }
}
