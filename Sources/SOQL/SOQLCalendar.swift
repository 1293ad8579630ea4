/// Proleptic Gregorian calendar arithmetic in UTC, on day numbers counted from 1970-01-01.
enum SOQLCalendar {
    static let millisecondsPerDay: Int64 = 86_400_000

    /// The day number of a civil date (Howard Hinnant's `days_from_civil`).
    static func dayNumber(year: Int64, month: Int, day: Int) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number (Howard Hinnant's `civil_from_days`).
    static func civilDate(dayNumber: Int64) -> (year: Int64, month: Int, day: Int) {
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1)
        let month = Int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The day number of the first day of a month counted as `year * 12 + (month - 1)`.
    static func dayNumber(ofMonthIndex monthIndex: Int64) -> Int64 {
        let year = monthIndex >= 0 ? monthIndex / 12 : (monthIndex - 11) / 12
        return dayNumber(year: year, month: Int(monthIndex - year * 12) + 1, day: 1)
    }

    /// The month index (`year * 12 + month - 1`) of the month holding a day number.
    static func monthIndex(ofDayNumber dayNumber: Int64) -> Int64 {
        let date = civilDate(dayNumber: dayNumber)
        return date.year * 12 + Int64(date.month - 1)
    }

    /// The day number of the Sunday starting the week that holds a day number (1970-01-01 was a Thursday).
    static func weekStart(ofDayNumber dayNumber: Int64) -> Int64 {
        let weekday = ((dayNumber + 4) % 7 + 7) % 7
        return dayNumber - weekday
    }

    /// The day number holding an instant in epoch milliseconds.
    static func dayNumber(ofInstant milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / millisecondsPerDay : (milliseconds + 1) / millisecondsPerDay - 1
    }

    /// Reads exactly `count` ASCII digits of `bytes` at `offset`.
    static func digits(_ bytes: [UInt8], at offset: Int, count: Int) -> Int? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[offset..<offset + count] {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// Zero-padded decimal text of a non-negative number.
    static func padded(_ value: some BinaryInteger, width: Int) -> String {
        var bytes: [UInt8] = []
        append(Int(value), width: width, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the decimal digits of `value`, zero-padded to `width`, to `bytes`.
    static func append(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        guard value >= 0 else {
            let text = String(value)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - text.utf8.count)))
            bytes.append(contentsOf: text.utf8)
            return
        }
        var digits = 1
        var rest = value / 10
        while rest > 0 { digits += 1; rest /= 10 }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(width, digits)))
        rest = value
        for position in (bytes.count - digits..<bytes.count).reversed() {
            bytes[position] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }
}
