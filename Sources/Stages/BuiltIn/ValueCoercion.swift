import Foundation
import JSON

/// Turns CSV text into typed JSON values (`types` of `extract.csv`).
struct ValueCoercion: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case string, integer, double, boolean, date, datetime
    }

    let kind: Kind
    /// A `DateFormatter` pattern for dates and datetimes; ISO-8601 when absent.
    let format: String?
    let timeZone: TimeZone

    /// The value, or why it does not convert.
    /// Whether `text` may start or end with white space (Foundation's trim, bridged through
    /// NSString, cost more than the conversion itself on every cell of a typed column).
    static func needsTrimming(_ text: String) -> Bool {
        guard let first = text.utf8.first, let last = text.utf8.last else { return false }
        let plain: (UInt8) -> Bool = { $0 > 0x20 && $0 < 0x80 }
        return !(plain(first) && plain(last))
    }

    func convert(_ text: String) -> Result<JSONValue, CoercionFailure> {
        let trimmed = Self.needsTrimming(text) ? text.trimmingCharacters(in: .whitespaces) : text
        switch kind {
        case .string:
            return .success(.string(text))
        case .integer:
            guard let number = Int64(trimmed) else { return .failure(CoercionFailure("'\(text)' is not an integer")) }
            return .success(.integer(number))
        case .double:
            guard let number = Double(trimmed), number.isFinite else { return .failure(CoercionFailure("'\(text)' is not a number")) }
            return .success(.double(number))
        case .boolean:
            switch trimmed.lowercased() {
            case "true", "yes", "1", "y": return .success(.bool(true))
            case "false", "no", "0", "n": return .success(.bool(false))
            default: return .failure(CoercionFailure("'\(text)' is not a boolean (true/false, yes/no, 1/0)"))
            }
        case .date, .datetime:
            guard let date = parseDate(trimmed) else {
                return .failure(CoercionFailure("'\(text)' is not a \(kind.rawValue)\(format.map { " in the format \($0)" } ?? "")"))
            }
            let instant = Timestamp.iso8601(date)
            return .success(.string(kind == .date ? String(instant.prefix(10)) : instant))
        }
    }

    private func parseDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        // A date is a calendar day: read it in UTC so no time zone moves it to another day.
        formatter.timeZone = kind == .date ? TimeZone(identifier: "UTC")! : timeZone
        formatter.isLenient = false
        if let format {
            formatter.dateFormat = format
            return formatter.date(from: text)
        }
        let candidates = kind == .date
            ? ["yyyy-MM-dd"]
            : ["yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX", "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ss",
               "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd"]
        for candidate in candidates {
            formatter.dateFormat = candidate
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

/// Why a value does not convert, for the rejects file.
struct CoercionFailure: Error, Sendable {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}
