import HearthDomain
import Testing

@testable import HearthLedger

/// Keys and wrapping contexts are written from a stream's name in parts; they must spell it
/// exactly as `StreamID.description` does, which the stream index and older key tables hold.
@Suite("ledger: stream names written in parts")
struct StreamNameTests {
    @Test(
        "every kind of stream, as its description spells it",
        arguments: [
            StreamID.account(ProjectID("demo-hearth")!, UserID("u-Ω-1")!), .project(ProjectID("p_1")!),
            .oobCode(ProjectID("demo")!, String(repeating: "ab", count: 32)),
        ])
    func spelledAsDescribed(stream: StreamID) {
        let name = StreamName(stream)
        #expect(name.bytes == Array(stream.description.utf8))
        #expect(name.count == stream.description.utf8.count)
        #expect(Ledger.streamPrefix(stream) == Array(stream.description.utf8) + [0])
    }
}
