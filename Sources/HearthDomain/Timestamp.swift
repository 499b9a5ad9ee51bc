/// RFC 3339 / ISO 8601 in UTC for Unix milliseconds, without Foundation's formatters
/// (civil-from-days, Howard Hinnant's algorithm).
public enum Timestamp {
    public static func iso8601(milliseconds: Int64) -> String {
        let (days, dayMillis) = floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hours = dayMillis / 3_600_000
        let minutes = dayMillis / 60_000 % 60
        let seconds = dayMillis / 1000 % 60
        let millis = dayMillis % 1000
        // Digits into one buffer: user records carry a timestamp on every lookup.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int64, _ width: Int, then separator: UInt8?) {
            let text = String(value).utf8
            if text.count < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - text.count)) }
            bytes.append(contentsOf: text)
            if let separator { bytes.append(separator) }
        }
        digits(year, 4, then: UInt8(ascii: "-"))
        digits(month, 2, then: UInt8(ascii: "-"))
        digits(day, 2, then: UInt8(ascii: "T"))
        digits(hours, 2, then: UInt8(ascii: ":"))
        digits(minutes, 2, then: UInt8(ascii: ":"))
        digits(seconds, 2, then: UInt8(ascii: "."))
        digits(millis, 3, then: UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses "2026-11-22", "2026-11-22T10:00:00Z", "...T10:00:00.250Z", "+hh:mm" offsets, or
    /// plain Unix milliseconds.
    public static func parse(_ text: String) -> Int64? {
        if let millis = Int64(text) { return millis }
        let chars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= chars.count else { return nil }
            var value: Int64 = 0
            for c in chars[range] {
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            return value
        }
        guard chars.count >= 10, chars[4] == 45, chars[7] == 45, let year = number(0..<4), let month = number(5..<7),
            let day = number(8..<10), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let dayNumber = days(fromCivil: year, month, day)
        // Reject days the month does not have (2026-02-30).
        guard civil(fromDays: dayNumber) == (year, month, day) else { return nil }
        var millis = dayNumber * 86_400_000
        if chars.count == 10 { return millis }
        guard chars.count >= 19, chars[10] == 84 || chars[10] == 116 || chars[10] == 32, chars[13] == 58, chars[16] == 58,
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19), hour < 24, minute < 60,
            second < 61
        else { return nil }
        millis += hour * 3_600_000 + minute * 60_000 + second * 1000
        var index = 19
        if index < chars.count, chars[index] == 46 {
            var digits = 0
            var fraction: Int64 = 0
            index += 1
            while index < chars.count, chars[index] >= 48 && chars[index] <= 57 {
                if digits < 3 { fraction = fraction * 10 + Int64(chars[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<3 where digits < 3 { fraction *= 10 }
            millis += fraction
        }
        guard index < chars.count else { return millis }
        if chars[index] == 90 || chars[index] == 122 { return index + 1 == chars.count ? millis : nil }
        guard chars[index] == 43 || chars[index] == 45, chars.count == index + 6, chars[index + 3] == 58,
            let offsetHours = number(index + 1..<index + 3), let offsetMinutes = number(index + 4..<index + 6)
        else { return nil }
        let offset = (offsetHours * 60 + offsetMinutes) * 60_000
        return chars[index] == 43 ? millis - offset : millis + offset
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a >= 0 ? a / b : (a - b + 1) / b
        return (q, a - q * b)
    }

    private static func civil(fromDays z: Int64) -> (Int64, Int64, Int64) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
