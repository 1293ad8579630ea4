import JSON

/// Salesforce's comparison semantics between a record's JSON value and a SOQL literal, or two JSON values.
///
/// Strings compare ignoring case; numbers numerically (numeric strings too); dates and datetimes as
/// instants, whatever offset they were written with; `null` equals only `null`, is unequal to any other
/// value and fails every ordering. Values of unrelated kinds are unequal and unordered.
enum SOQLValueComparison {
    /// Whether `value <operator> literal` holds, for `= != < <= > >=`.
    static func holds(
        _ value: JSONValue, _ comparison: SOQLComparisonOperator, _ literal: SOQLValue, now: Int64
    ) -> Bool {
        if literal == .null || value.isNull {
            switch comparison {
            case .equal: return literal == .null && value.isNull
            case .notEqual: return (literal == .null) != value.isNull
            default: return false
            }
        }
        if let range = instantRange(of: literal, now: now) {
            guard let instant = instant(of: value) else { return comparison == .notEqual }
            switch comparison {
            case .equal: return range.contains(instant)
            case .notEqual: return !range.contains(instant)
            case .lessThan: return instant < range.lowerBound
            case .lessThanOrEqual: return instant < range.upperBound
            case .greaterThan: return instant >= range.upperBound
            case .greaterThanOrEqual: return instant >= range.lowerBound
            default: return false
            }
        }
        guard let order = order(value, literal) else { return comparison == .notEqual }
        switch comparison {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .lessThan: return order < 0
        case .lessThanOrEqual: return order <= 0
        case .greaterThan: return order > 0
        case .greaterThanOrEqual: return order >= 0
        default: return false
        }
    }

    /// Whether a multi-select picklist value (`A;B;C`) holds every value of one of the operands (`'A;C'`).
    static func includes(_ value: JSONValue, _ operands: [SOQLValue]) -> Bool {
        guard case .string(let text) = value else { return false }
        let selected = Set(picklistValues(text))
        return operands.contains { operand in
            guard case .string(let wanted) = operand else { return false }
            let wantedValues = picklistValues(wanted)
            return !wantedValues.isEmpty && wantedValues.allSatisfy(selected.contains)
        }
    }

    /// The literal a JSON value stands for, to match subquery results like literals.
    static func literal(_ value: JSONValue) -> SOQLValue? {
        switch value {
        case .null: return .null
        case .bool(let boolean): return .boolean(boolean)
        case .integer(let integer): return .integer(integer)
        case .double(let double): return .decimal(double)
        case .string(let string): return .string(string)
        case .array, .object: return nil
        }
    }

    /// The order of two non-null record values, for ORDER BY: numbers numerically, date and datetime
    /// strings as instants, other strings ignoring case, `false` before `true`; across kinds, booleans,
    /// then numbers, then strings, then anything else.
    static func order(_ lhs: JSONValue, _ rhs: JSONValue) -> Int {
        switch (lhs, rhs) {
        case (.integer(let left), .integer(let right)): return sign(left, right)
        case (.bool(let left), .bool(let right)): return sign(left ? 1 : 0, right ? 1 : 0)
        case (.string(let left), .string(let right)):
            if let leftInstant = instant(of: lhs), let rightInstant = instant(of: rhs) {
                return sign(leftInstant, rightInstant)
            }
            return caselessOrder(left, right)
        default:
            if let left = lhs.doubleValue, let right = rhs.doubleValue { return sign(left, right) }
            return sign(kindRank(lhs), kindRank(rhs))
        }
    }

    /// Milliseconds since 1970 of a `YYYY-MM-DD` or datetime string.
    static func instant(of value: JSONValue) -> Int64? {
        guard case .string(let text) = value, text.utf8.count >= 10,
            text.utf8.first.map({ $0 >= 0x30 && $0 <= 0x39 }) == true
        else { return nil }
        if let date = SOQLDate(parsing: text) { return date.dayNumber * SOQLCalendar.millisecondsPerDay }
        return SOQLDateTime(parsing: text, requiringOffset: false)?.epochMilliseconds
    }

    private static func instantRange(of literal: SOQLValue, now: Int64) -> Range<Int64>? {
        switch literal {
        case .date(let date):
            let start = date.dayNumber * SOQLCalendar.millisecondsPerDay
            return start..<start + SOQLCalendar.millisecondsPerDay
        case .dateTime(let dateTime):
            return dateTime.epochMilliseconds..<dateTime.epochMilliseconds + 1
        case .dateLiteral(let literal):
            return literal.range(now: now)
        default:
            return nil
        }
    }

    /// The order of a non-null value against a non-null, non-date literal, or `nil` when unrelated.
    private static func order(_ value: JSONValue, _ literal: SOQLValue) -> Int? {
        switch literal {
        case .string(let string):
            return text(of: value).map { caselessOrder($0, string) }
        case .integer(let integer):
            if case .integer(let stored) = value { return sign(stored, integer) }
            if case .string(let text) = value, let stored = Int64(text) { return sign(stored, integer) }
            return number(of: value).map { sign($0, Double(integer)) }
        case .decimal(let decimal):
            return number(of: value).map { sign($0, decimal) }
        case .boolean(let boolean):
            let stored: Bool? =
                switch value {
                case .bool(let stored): stored
                case .string(let text) where text.lowercased() == "true": true
                case .string(let text) where text.lowercased() == "false": false
                default: nil
                }
            return stored.map { sign($0 ? 1 : 0, boolean ? 1 : 0) }
        default:
            return nil
        }
    }

    private static func text(of value: JSONValue) -> String? {
        switch value {
        case .string(let string): return string
        case .integer(let integer): return String(integer)
        case .double(let double): return SOQLPrinter.decimalText(double)
        case .bool(let boolean): return boolean ? "true" : "false"
        default: return nil
        }
    }

    private static func number(of value: JSONValue) -> Double? {
        if case .string(let text) = value { return Double(text).flatMap { $0.isFinite ? $0 : nil } }
        return value.doubleValue
    }

    private static func picklistValues(_ text: String) -> [String] {
        text.split(separator: ";").map { part in
            var part = part
            while part.first == " " { part.removeFirst() }
            while part.last == " " { part.removeLast() }
            return part.lowercased()
        }.filter { !$0.isEmpty }
    }

    private static func caselessOrder(_ lhs: String, _ rhs: String) -> Int {
        sign(lhs.lowercased(), rhs.lowercased())
    }

    private static func kindRank(_ value: JSONValue) -> Int {
        switch value {
        case .bool: return 0
        case .integer, .double: return 1
        case .string: return 2
        default: return 3
        }
    }

    private static func sign<T: Comparable>(_ lhs: T, _ rhs: T) -> Int {
        lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
    }
}
