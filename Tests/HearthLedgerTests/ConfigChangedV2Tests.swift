import HearthDomain
import HearthLedger
import Testing

/// `project.config_changed` v2 (before the apps' Team IDs and certificates) and v3 (before
/// multi-factor) stay readable.
@Suite("project.config_changed v2 and v3 in older ledgers")
struct ConfigChangedV2Tests {
    @Test func aV2PayloadReadsWithoutApps() throws {
        let change = ProjectConfigChange(
            emailPasswordEnabled: false, linkDomains: ["links.x.io"], anonymousCleanupPeriodSeconds: 60, iosBundleIds: ["io.x.app"],
            androidPackages: ["io.x.android"])
        // v2's layout is v4's without the trailing (absent) app lists, multi-factor setting and
        // password policy.
        let v4 = PayloadCodec.encode(.projectConfigChanged(change)).open
        let v2 = Array(v4.dropLast(4))
        let decoded = try v2.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChangedV2, from: $0) }
        #expect(decoded == .projectConfigChanged(change))
        #expect(throws: BinaryFormatError.self) {
            try v2.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChanged, from: $0) }
        }
    }

    @Test func aV3PayloadReadsWithoutMultiFactorOrPasswordPolicy() throws {
        let change = ProjectConfigChange(
            improvedEmailPrivacy: true, iosApps: [IOSApp(bundleId: "io.x.app", teamId: "ABCDE12345")], androidApps: [])
        let v3 = Array(PayloadCodec.encode(.projectConfigChanged(change)).open.dropLast(2))
        let decoded = try v3.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChangedV3, from: $0) }
        #expect(decoded == .projectConfigChanged(change))
        #expect(throws: BinaryFormatError.self) {
            try v3.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChanged, from: $0) }
        }
    }
}
