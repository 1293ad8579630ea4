/// A SOQL date literal such as `2024-01-31`: a calendar day, compared as UTC midnight.
public struct SOQLDate: Sendable, Hashable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// A valid calendar day with a four-digit year, or `nil`.
    public init?(year: Int, month: Int, day: Int) {
        guard (0...9999).contains(year), (1...12).contains(month),
            (1...SOQLCalendar.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Reads `YYYY-MM-DD` (the whole text), as SOQL literals and Salesforce date fields write it.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, let date = Self(bytes: bytes) else { return nil }
        self = date
    }

    /// Reads `YYYY-MM-DD` at the start of `bytes`.
    init?(bytes: [UInt8]) {
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = SOQLCalendar.digits(bytes, at: 0, count: 4),
            let month = SOQLCalendar.digits(bytes, at: 5, count: 2),
            let day = SOQLCalendar.digits(bytes, at: 8, count: 2)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Days since 1970-01-01.
    public var dayNumber: Int64 { SOQLCalendar.dayNumber(year: Int64(year), month: month, day: day) }

    /// `YYYY-MM-DD`.
    public var description: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `YYYY-MM-DD` to `bytes`.
    func write(into bytes: inout [UInt8]) {
        SOQLCalendar.append(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        SOQLCalendar.append(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        SOQLCalendar.append(day, width: 2, to: &bytes)
    }
}
