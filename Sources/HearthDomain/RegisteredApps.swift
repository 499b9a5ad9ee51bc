/// An iOS app of the project, as Firebase registers one (`IosApp`: bundle id, Team ID, App
/// Store id): the Team ID makes its universal-link id (`TEAMID.bundleId`) in the link domains'
/// apple-app-site-association.
public struct IOSApp: Equatable, Hashable, Sendable, Encodable {
    public var bundleId: String
    /// Apple's Team ID: 10 characters of A-Z and 0-9.
    public var teamId: String
    /// The App Store id (digits), for the link page's "get the app".
    public var appStoreId: String?

    public init(bundleId: String, teamId: String, appStoreId: String? = nil) {
        self.bundleId = bundleId
        self.teamId = teamId
        self.appStoreId = appStoreId
    }

    /// The id apple-app-site-association lists (`appIDs`).
    public var appLinkId: String { teamId + "." + bundleId }
}

/// An Android app of the project, as Firebase registers one (`AndroidApp`: package name and
/// its signing certificates' SHA-256 hashes): the link domains' assetlinks.json lets the apps so
/// signed open their links.
public struct AndroidApp: Equatable, Hashable, Sendable, Encodable {
    public var packageName: String
    /// Upper-case hex pairs joined by colons (Digital Asset Links' form), 32 bytes each.
    public var sha256Hashes: [String]

    public init(packageName: String, sha256Hashes: [String]) {
        self.packageName = packageName
        self.sha256Hashes = sha256Hashes
    }
}
