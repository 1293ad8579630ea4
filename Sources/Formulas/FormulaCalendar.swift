/// Proleptic Gregorian calendar arithmetic in UTC, without Foundation: dates are days since
/// 1970-01-01, date/times milliseconds since 1970-01-01T00:00:00Z.
public enum FormulaCalendar {
    static let millisecondsPerDay: Int64 = 86_400_000

    /// Days since 1970-01-01 of a civil date (any valid date; not checked here).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number.
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day number of a date, or `nil` when it does not exist (years 1–9999).
    static func validDays(year: Int, month: Int, day: Int) -> Int? {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        return days(year: year, month: month, day: day)
    }

    /// Day of the week, 1 = Sunday … 7 = Saturday.
    static func weekday(_ days: Int) -> Int { ((days % 7 + 7 + 4) % 7) + 1 }

    /// The date `months` months after `days`; the last day of the month when the day does not
    /// exist in it or the start is the last day of its own month (Salesforce's `ADDMONTHS`).
    static func addingMonths(_ months: Int, to days: Int) -> Int? {
        let (year, month, day) = civil(days)
        let total = year * 12 + (month - 1) + months
        let newYear = total >= 0 ? total / 12 : (total - 11) / 12
        let newMonth = total - newYear * 12 + 1
        let last = daysInMonth(year: newYear, month: newMonth)
        let endOfMonth = day == daysInMonth(year: year, month: month)
        return validDays(year: newYear, month: newMonth, day: endOfMonth ? last : min(day, last))
    }

    // MARK: Text

    /// `YYYY-MM-DD`.
    public static func formatDate(_ days: Int) -> String {
        let (year, month, day) = civil(days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// `YYYY-MM-DDTHH:MM:SS.sss+0000`, as the REST API writes date/times.
    static func formatDateTimeISO(_ milliseconds: Int64) -> String {
        let (days, time) = split(milliseconds)
        let clock = time / 1000
        return formatDate(days) + "T" + pad(clock / 3600, 2) + ":" + pad(clock / 60 % 60, 2) + ":" + pad(clock % 60, 2)
            + "." + pad(time % 1000, 3) + "+0000"
    }

    /// `YYYY-MM-DD HH:MM:SSZ`, as `TEXT` writes a date/time.
    static func formatDateTimeText(_ milliseconds: Int64) -> String {
        let (days, time) = split(milliseconds)
        let clock = time / 1000
        return formatDate(days) + " " + pad(clock / 3600, 2) + ":" + pad(clock / 60 % 60, 2) + ":" + pad(clock % 60, 2) + "Z"
    }

    static func split(_ milliseconds: Int64) -> (days: Int, millisecondOfDay: Int) {
        var days = milliseconds / millisecondsPerDay
        var rest = milliseconds % millisecondsPerDay
        if rest < 0 { days -= 1; rest += millisecondsPerDay }
        return (Int(days), Int(rest))
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Reads `YYYY-MM-DD` (a date/time's text is read for its date in UTC).
    public static func parseDate(_ text: Substring) -> Int? {
        let bytes = Array(text.utf8)
        if bytes.count > 10 { return parseDateTime(text).map { split($0).days } }
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2) else { return nil }
        return validDays(year: year, month: month, day: day)
    }

    /// Reads `YYYY-MM-DD`, then `T` or a space and `HH:MM[:SS[.fff]]`, then `Z`, `±HH:MM` or
    /// `±HHMM` (no zone: UTC). A date alone is its midnight, UTC.
    static func parseDateTime(_ text: Substring) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
              let days = validDays(year: year, month: month, day: day) else { return nil }
        var milliseconds = Int64(days) * millisecondsPerDay
        guard bytes.count > 10 else { return milliseconds }
        guard bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "), bytes.count >= 16, bytes[13] == UInt8(ascii: ":"),
              let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), hour < 24, minute < 60 else { return nil }
        var index = 16
        var seconds = 0
        var fraction = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            guard let value = number(bytes, index + 1, 2), value < 60 else { return nil }
            seconds = value
            index += 3
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                var digits = 0
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                    if digits < 3 { fraction = fraction * 10 + Int(bytes[index] - 0x30) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 3) { fraction *= 10 }
            }
        }
        milliseconds += Int64(((hour * 60 + minute) * 60 + seconds) * 1000 + fraction)
        guard index < bytes.count else { return milliseconds }
        if bytes[index] == UInt8(ascii: "Z"), index == bytes.count - 1 { return milliseconds }
        guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"), let offsetHours = number(bytes, index + 1, 2) else { return nil }
        let minutesAt = bytes.count == index + 6 && bytes[index + 3] == UInt8(ascii: ":") ? index + 4 : index + 3
        guard bytes.count == minutesAt + 2 || bytes.count == index + 3, offsetHours < 24 else { return nil }
        let offsetMinutes = bytes.count == index + 3 ? 0 : (number(bytes, minutesAt, 2) ?? 60)
        guard offsetMinutes < 60 else { return nil }
        let offset = Int64((offsetHours * 60 + offsetMinutes) * 60_000)
        return bytes[index] == UInt8(ascii: "+") ? milliseconds - offset : milliseconds + offset
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[start..<start + count] {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}
