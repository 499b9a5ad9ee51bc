import HearthDomain
import HearthLedger
import Testing

/// `project.config_changed` v2 (before the apps' Team IDs and certificates) stays readable.
@Suite("project.config_changed v2 in older ledgers")
struct ConfigChangedV2Tests {
    @Test func aV2PayloadReadsWithoutApps() throws {
        let change = ProjectConfigChange(
            emailPasswordEnabled: false, linkDomains: ["links.x.io"], anonymousCleanupPeriodSeconds: 60, iosBundleIds: ["io.x.app"],
            androidPackages: ["io.x.android"])
        // v2's layout is v3's without the two trailing (absent) app lists.
        let v3 = PayloadCodec.encode(.projectConfigChanged(change)).open
        let v2 = Array(v3.dropLast(2))
        let decoded = try v2.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChangedV2, from: $0) }
        #expect(decoded == .projectConfigChanged(change))
        #expect(throws: BinaryFormatError.self) {
            try v2.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChanged, from: $0) }
        }
    }
}
