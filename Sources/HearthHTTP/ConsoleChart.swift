import HearthDomain

/// Bar charts drawn by the server as inline SVG: no script, no style attribute (the console's
/// CSP allows neither), a title per bar for its exact count, and a text label for readers.
enum ConsoleChart {
    /// One bar per UTC day from `first` to `last` (days since 1970), the days `counts` lacks at 0.
    static func days(_ counts: [DayCount], from first: Int64, to last: Int64, label: String) -> String {
        let byDay = Dictionary(counts.map { ($0.day, $0.accounts) }, uniquingKeysWith: +)
        let days = Array(first...max(first, last))
        return bars(days.map { (Self.date($0), byDay[$0] ?? 0) }, label: label)
    }

    /// Labelled bars, left to right.
    static func bars(_ bars: [(label: String, value: Int)], label: String) -> String {
        let width = 720
        let height = 180
        let top = 16
        let bottom = 28
        let left = 8
        let plot = height - top - bottom
        let most = max(1, bars.map(\.value).max() ?? 0)
        let step = Double(width - 2 * left) / Double(max(1, bars.count))
        let total = bars.reduce(0) { $0 + $1.value }
        var svg =
            "<figure class=\"chart\"><svg viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(HTMLPage.escaped(label)): \(total) in all, at most \(most) a day\">"
        svg += "<line x1=\"\(left)\" y1=\"\(top + plot)\" x2=\"\(width - left)\" y2=\"\(top + plot)\" stroke=\"#8a8f98\"/>"
        for (index, bar) in bars.enumerated() {
            let barHeight = Int((Double(bar.value) / Double(most) * Double(plot)).rounded())
            let x = Double(left) + Double(index) * step + step * 0.1
            svg +=
                "<rect x=\"\(format(x))\" y=\"\(top + plot - barHeight)\" width=\"\(format(step * 0.8))\" height=\"\(barHeight)\" fill=\"#20304a\">"
            svg += "<title>\(HTMLPage.escaped(bar.label)): \(bar.value)</title></rect>"
        }
        if let first = bars.first, let last = bars.last {
            svg += "<text x=\"\(left)\" y=\"\(height - 8)\" font-size=\"12\" fill=\"#555\">\(HTMLPage.escaped(first.label))</text>"
            svg +=
                "<text x=\"\(width - left)\" y=\"\(height - 8)\" font-size=\"12\" fill=\"#555\" text-anchor=\"end\">\(HTMLPage.escaped(last.label))</text>"
        }
        svg += "<text x=\"\(left)\" y=\"12\" font-size=\"12\" fill=\"#555\">\(most)</text></svg>"
        return svg + "<figcaption>\(HTMLPage.escaped(label)) (\(total) in all)</figcaption></figure>"
    }

    /// A UTC day as YYYY-MM-DD.
    static func date(_ day: Int64) -> String {
        String(Timestamp.iso8601(milliseconds: day * DayCount.millisecondsPerDay).prefix(10))
    }

    private static func format(_ value: Double) -> String {
        String(Double(Int(value * 10)) / 10)
    }
}
