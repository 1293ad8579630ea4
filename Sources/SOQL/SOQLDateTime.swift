/// A SOQL datetime literal such as `2024-01-31T12:00:00.000Z`: an instant written with a UTC offset.
public struct SOQLDateTime: Sendable, Hashable, CustomStringConvertible {
    public let date: SOQLDate
    public let hour: Int
    public let minute: Int
    public let second: Int
    public let millisecond: Int
    /// Minutes east of UTC (`+05:30` is 330, `Z` is 0).
    public let utcOffsetMinutes: Int

    /// A valid time of day on `date`, or `nil`.
    public init?(
        date: SOQLDate, hour: Int, minute: Int, second: Int, millisecond: Int = 0, utcOffsetMinutes: Int = 0
    ) {
        guard (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
            (0...999).contains(millisecond), (-1439...1439).contains(utcOffsetMinutes)
        else { return nil }
        self.date = date
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = millisecond
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    /// The UTC datetime of an instant in milliseconds since 1970-01-01T00:00:00Z (years 0000–9999), or `nil`.
    public init?(epochMilliseconds: Int64) {
        let dayNumber = SOQLCalendar.dayNumber(ofInstant: epochMilliseconds)
        let civil = SOQLCalendar.civilDate(dayNumber: dayNumber)
        guard (0...9999).contains(civil.year),
            let date = SOQLDate(year: Int(civil.year), month: civil.month, day: civil.day)
        else { return nil }
        let millisecondOfDay = Int(epochMilliseconds - dayNumber * SOQLCalendar.millisecondsPerDay)
        self.init(
            date: date, hour: millisecondOfDay / 3_600_000, minute: millisecondOfDay / 60_000 % 60,
            second: millisecondOfDay / 1000 % 60, millisecond: millisecondOfDay % 1000)
    }

    /// Reads `YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm|±hhmm]` (the whole text): the SOQL literal form and the
    /// form Salesforce returns (`2024-01-31T12:00:00.000+0000`). Fractions beyond milliseconds are cut.
    /// Without `requiringOffset`, a missing offset means UTC.
    public init?(parsing text: String, requiringOffset: Bool) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, let date = SOQLDate(bytes: bytes), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let hour = SOQLCalendar.digits(bytes, at: 11, count: 2),
            let minute = SOQLCalendar.digits(bytes, at: 14, count: 2),
            let second = SOQLCalendar.digits(bytes, at: 17, count: 2)
        else { return nil }
        var offset = 19
        var millisecond = 0
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            var fractionDigits = 0
            while let digit = SOQLCalendar.digits(bytes, at: offset, count: 1) {
                if fractionDigits < 3 { millisecond = millisecond * 10 + digit }
                fractionDigits += 1
                offset += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<max(fractionDigits, 3) { millisecond *= 10 }
        }
        guard let utcOffsetMinutes = Self.utcOffset(bytes, at: offset, required: requiringOffset) else {
            return nil
        }
        self.init(
            date: date, hour: hour, minute: minute, second: second, millisecond: millisecond,
            utcOffsetMinutes: utcOffsetMinutes)
    }

    /// Reads `Z`, `±hh:mm` or `±hhmm` ending the text at `offset`; nothing there is UTC unless required.
    private static func utcOffset(_ bytes: [UInt8], at offset: Int, required: Bool) -> Int? {
        guard offset < bytes.count else { return required ? nil : 0 }
        if bytes[offset] == UInt8(ascii: "Z") { return offset + 1 == bytes.count ? 0 : nil }
        let sign: Int
        switch bytes[offset] {
        case UInt8(ascii: "+"): sign = 1
        case UInt8(ascii: "-"): sign = -1
        default: return nil
        }
        guard let hours = SOQLCalendar.digits(bytes, at: offset + 1, count: 2), hours <= 23 else { return nil }
        let minutesAt = bytes.count == offset + 6 && bytes[offset + 3] == UInt8(ascii: ":") ? offset + 4 : offset + 3
        guard minutesAt + 2 == bytes.count, let minutes = SOQLCalendar.digits(bytes, at: minutesAt, count: 2),
            minutes <= 59
        else { return nil }
        return sign * (hours * 60 + minutes)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var epochMilliseconds: Int64 {
        let secondOfDay = Int64(hour * 3600 + minute * 60 + second - utcOffsetMinutes * 60)
        return (date.dayNumber * 86_400 + secondOfDay) * 1000 + Int64(millisecond)
    }

    /// Salesforce's form: `2024-01-31T12:00:00.000Z`, or `…+05:30` for a non-zero offset.
    public var description: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        date.write(into: &bytes)
        bytes.append(UInt8(ascii: "T"))
        SOQLCalendar.append(hour, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        SOQLCalendar.append(minute, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        SOQLCalendar.append(second, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        SOQLCalendar.append(millisecond, width: 3, to: &bytes)
        if utcOffsetMinutes == 0 {
            bytes.append(UInt8(ascii: "Z"))
        } else {
            let magnitude = abs(utcOffsetMinutes)
            bytes.append(UInt8(ascii: utcOffsetMinutes < 0 ? "-" : "+"))
            SOQLCalendar.append(magnitude / 60, width: 2, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            SOQLCalendar.append(magnitude % 60, width: 2, to: &bytes)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
