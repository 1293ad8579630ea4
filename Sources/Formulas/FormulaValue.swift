import JSON

/// A value a formula works with. Empty text is blank, as in Salesforce.
public enum FormulaValue: Sendable, Hashable {
    case blank
    case text(String)
    case number(Double)
    case boolean(Bool)
    /// Days since 1970-01-01.
    case date(Int)
    /// Milliseconds since 1970-01-01T00:00:00Z.
    case dateTime(Int64)

    /// The value of a record's field: `null` and `""` are blank; strings are text (converted where
    /// a number or a date is needed, when they read as one).
    public init(_ json: JSONValue) throws(FormulaEvaluationError) {
        switch json {
        case .null: self = .blank
        case .string(let text): self = text.isEmpty ? .blank : .text(text)
        case .integer(let value): self = .number(Double(value))
        case .double(let value): self = .number(value)
        case .bool(let value): self = .boolean(value)
        case .array, .object: throw FormulaEvaluationError("is \(json.kindName), not a single value")
        }
    }

    /// The value as a record's field holds it: dates as `YYYY-MM-DD`, date/times as the REST API
    /// writes them, whole numbers as integers.
    public var json: JSONValue {
        switch self {
        case .blank: .null
        case .text(let text): .string(text)
        case .number(let value):
            value.rounded() == value && abs(value) < 9_007_199_254_740_992 ? .integer(Int64(value)) : .double(value)
        case .boolean(let value): .bool(value)
        case .date(let days): .string(FormulaCalendar.formatDate(days))
        case .dateTime(let milliseconds): .string(FormulaCalendar.formatDateTimeISO(milliseconds))
        }
    }

    public var isBlank: Bool {
        if case .blank = self { return true }
        return false
    }

    /// The value's own type (`any` for blank).
    var type: FormulaType {
        switch self {
        case .blank: .any
        case .text: .text
        case .number: .number
        case .boolean: .boolean
        case .date: .date
        case .dateTime: .dateTime
        }
    }

    /// The value as `TEXT` writes it.
    var text: String {
        switch self {
        case .blank: ""
        case .text(let text): text
        case .number(let value): FormulaNumber.format(value)
        case .boolean(let value): value ? "true" : "false"
        case .date(let days): FormulaCalendar.formatDate(days)
        case .dateTime(let milliseconds): FormulaCalendar.formatDateTimeText(milliseconds)
        }
    }

    /// The value converted to `type` (blank stays blank), or why it cannot be: text that does not
    /// read as a number or a date, say.
    func converted(to type: FormulaType) throws(FormulaEvaluationError) -> FormulaValue {
        switch (self, type) {
        case (.blank, _), (_, .any): return self
        case (.text, .text), (.number, .number), (.boolean, .boolean), (.date, .date), (.dateTime, .dateTime): return self
        case (_, .text): return .text(text)
        case (.text(let text), .number):
            guard let value = FormulaNumber.parse(text) else { throw FormulaEvaluationError("\(quoted(text)) is not a number") }
            return .number(value)
        case (.text(let text), .date):
            guard let days = FormulaCalendar.parseDate(Substring(text)) else { throw FormulaEvaluationError("\(quoted(text)) is not a date (YYYY-MM-DD)") }
            return .date(days)
        case (.dateTime(let milliseconds), .date): return .date(FormulaCalendar.split(milliseconds).days)
        case (.text(let text), .dateTime):
            guard let milliseconds = FormulaCalendar.parseDateTime(Substring(text)) else {
                throw FormulaEvaluationError("\(quoted(text)) is not a date/time (YYYY-MM-DD HH:MM:SS, UTC)")
            }
            return .dateTime(milliseconds)
        case (.date(let days), .dateTime): return .dateTime(Int64(days) * FormulaCalendar.millisecondsPerDay)
        case (.text(let text), .boolean):
            switch text.lowercased() {
            case "true", "1": return .boolean(true)
            case "false", "0": return .boolean(false)
            default: throw FormulaEvaluationError("\(quoted(text)) is not a boolean (true or false)")
            }
        case (.number(let value), .boolean) where value == 0 || value == 1: return .boolean(value == 1)
        default: throw FormulaEvaluationError("\(quoted(text)) is \(self.type), not \(type)")
        }
    }
}

/// `"text"` for messages, cut at 60 characters.
func quoted(_ text: String) -> String {
    text.count > 60 ? "\"\(text.prefix(57))…\"" : "\"\(text)\""
}

/// Numbers as formulas read and write them.
enum FormulaNumber {
    /// Reads a decimal number: optional sign, digits, optional fraction and exponent; spaces around
    /// it are allowed, thousands separators are not.
    static func parse(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45 }),
              let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }

    /// Writes a number without an exponent and without trailing zeros: `1234.5`, `-0.25`, `3`.
    static func format(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e18 { return String(Int64(value)) }
        let shortest = String(value)
        guard let exponentAt = shortest.firstIndex(where: { $0 == "e" || $0 == "E" }) else { return shortest }
        // Expands the exponent of Swift's shortest form: 1.5e-07 → 0.00000015.
        let exponent = Int(shortest[shortest.index(after: exponentAt)...]) ?? 0
        var mantissa = String(shortest[..<exponentAt])
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa.removeFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let digits = String(parts[0]) + (parts.count > 1 ? String(parts[1]) : "")
        let point = parts[0].count + exponent
        var result: String
        if point <= 0 {
            result = "0." + String(repeating: "0", count: -point) + digits
        } else if point >= digits.count {
            result = digits + String(repeating: "0", count: point - digits.count)
        } else {
            result = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
        }
        if result.contains(".") {
            while result.hasSuffix("0") { result.removeLast() }
            if result.hasSuffix(".") { result.removeLast() }
        }
        return (negative ? "-" : "") + result
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        // Spaces and tabs are single bytes in UTF-8 and never part of another character.
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
        if first == utf8.startIndex && utf8.index(after: last) == utf8.endIndex { return self }
        return String(self[first...last])
    }
}
