import HearthAuth
import HearthDomain
import Testing

@Suite("new uids")
struct UserIDTests {
    static let now: Int64 = 1_767_225_600_000

    @Test("uids: 28 characters of [0-9A-Za-z]; 8 digits of the creation time, then 20 random ones, each drawn evenly")
    func userIDs() {
        let uids = (0..<10_000).map { _ in UserIDMinter.mint(at: Self.now).rawValue }
        #expect(Set(uids).count == uids.count)
        #expect(uids.allSatisfy { $0.count == 28 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
        #expect(uids.allSatisfy { $0.hasPrefix("0V70MWDg") })
        // 200,000 random draws over 62 symbols: each appears about 3,226 times (σ ≈ 56). Without
        // rejecting the bytes that bias the modulo, the first 8 symbols would appear about
        // 3,906 times (5 bytes of 256 map to each, not 4): far outside these bounds.
        var counts: [Character: Int] = [:]
        for uid in uids { for character in uid.dropFirst(8) { counts[character, default: 0] += 1 } }
        #expect(counts.count == 62)
        #expect(counts.values.allSatisfy { (2_890...3_560).contains($0) })
    }

    @Test("uids sort as their creation times do, across every digit's carry")
    func userIDsSortByTime() {
        let times: [Int64] = [-5, 0, 1, 61, 62, 63, 3_843, 3_844, Self.now - 1, Self.now, Self.now + 1, 218_340_105_584_895]
        let prefixes = times.map { String(UserIDMinter.mint(at: $0).rawValue.prefix(8)) }
        #expect(
            prefixes == [
                "00000000", "00000000", "00000001", "0000000z", "00000010", "00000011", "000000zz", "00000100",
                "0V70MWDf", "0V70MWDg", "0V70MWDh", "zzzzzzzz",
            ])
        #expect(prefixes == prefixes.sorted())
    }
}
