/// The one way a time in seconds is shown to a person and read back from one.
///
/// Shown as `m:ss.mmm`, or `h:mm:ss.mmm` from an hour up, rounded to the nearest millisecond *before* it is split
/// into fields, so 0.9996 s is `0:01.000` and never `0:00.1000`. Negative times carry a leading `-`. NaN is
/// `unknown` and the infinities are `infinite` and `-infinite`; a finite time too long to count in milliseconds
/// (over about 292 million years) is shown in seconds.
package enum DurationText {
    package static func format(_ seconds: Double) -> String {
        if seconds.isNaN { return "unknown" }
        if seconds.isInfinite { return seconds < 0 ? "-infinite" : "infinite" }
        guard let millis = try? (seconds.magnitude * 1000).integer(Int64.self, "milliseconds") else {
            return "\(seconds) s"
        }
        let sign = seconds < 0 && millis > 0 ? "-" : ""
        let hours = millis / 3_600_000, minutes = millis / 60_000 % 60, secs = millis / 1000 % 60, ms = millis % 1000
        let tail = padded(secs, 2) + "." + padded(ms, 3)
        return hours > 0 ? sign + "\(hours):" + padded(minutes, 2) + ":" + tail : sign + "\(minutes):" + tail
    }

    /// Reads `S`, `S.fff`, `M:SS(.fff)` or `H:MM:SS(.fff)`, with an optional leading `-`. Minutes and seconds after
    /// the first field must be below 60. Anything else, including NaN and infinities, is nil.
    package static func parse(_ text: String) -> Double? {
        var body = Substring(text)
        let negative = body.first == "-"
        if negative { body = body.dropFirst() }
        let fields = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count), fields.allSatisfy({ !$0.isEmpty }) else { return nil }
        var total = 0.0
        for (index, field) in fields.enumerated() {
            let last = index == fields.count - 1
            // Only the last field may have a fraction; only digits and one dot anywhere.
            guard field.allSatisfy({ $0.isASCII && ($0.isNumber || last && $0 == ".") }),
                field.filter({ $0 == "." }).count <= 1, field.first != ".", field.last != ".",
                let value = Double(field), value.isFinite
            else { return nil }
            if index > 0 {
                guard value < 60, field.count >= 2, field.prefix(while: { $0 != "." }).count == 2 else { return nil }
            }
            total = total * 60 + value
        }
        guard total.isFinite else { return nil }
        return negative ? -total : total
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }
}
