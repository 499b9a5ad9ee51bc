import HearthCrypto
import HearthDomain

/// New uids: 28 characters of [0-9A-Za-z], the shape of Firebase's. The first 8 are the
/// creation time in milliseconds, base 62 in ASCII order, so uids sort by creation time (as
/// ULIDs and UUIDv7 do); the other 20 are random, 119 bits.
///
/// Why: every uid-keyed B-tree (the accounts, the anonymous accounts, the ledger's stream
/// index) takes a sign-up's entries where the other new accounts' went, on the same few pages,
/// instead of each on a random page of its own. With refresh tokens that name their account, a
/// durable sign-up writes and syncs one or two pages instead of about seven. The trade: a uid
/// tells when its account was created.
public enum UserIDMinter {
    static let timeDigits = 8
    static let randomDigits = 20
    /// In ASCII order, so the base-62 time digits compare as the times do.
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    public static func mint(at milliseconds: Int64) -> UserID {
        // 62^8 ms is about 6,900 years; a clock before 1970 mints 00000000.
        var time = UInt64(max(milliseconds, 0))
        var digits = [UInt8](repeating: alphabet[0], count: timeDigits)
        for index in digits.indices.reversed() {
            digits[index] = alphabet[Int(time % 62)]
            time /= 62
        }
        return UserID(String(decoding: digits, as: UTF8.self) + SecureRandom.string(randomDigits, from: alphabet))!
    }
}
