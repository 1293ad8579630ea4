import Foundation

/// The operators at run time, where a field's text is converted to the type the other side
/// needs (`"12.5" * 2`, `"2024-01-31" + 30`).
enum FormulaOperations {
    static func finite(_ value: Double) throws(FormulaEvaluationError) -> FormulaValue {
        guard value.isFinite else { throw FormulaEvaluationError("the result is not a finite number") }
        return .number(value == 0 ? 0 : value)
    }

    static func apply(_ op: FormulaOperator, _ left: FormulaValue, _ right: FormulaValue, textual: Bool) throws(FormulaEvaluationError) -> FormulaValue {
        switch op {
        case .concatenate:
            return FormulaFunction.textResult(left.text + right.text)
        case .add where textual || (isText(left) && isText(right)):
            return FormulaFunction.textResult(left.text + right.text)
        case .add, .subtract:
            if left.isBlank || right.isBlank { return .blank }
            return try arithmetic(op, left, right)
        case .multiply, .divide, .power:
            guard case .number(let a) = try left.converted(to: .number), case .number(let b) = try right.converted(to: .number) else { return .blank }
            switch op {
            case .multiply: return try finite(a * b)
            case .divide:
                guard b != 0 else { throw FormulaEvaluationError("division by zero") }
                return try finite(a / b)
            default: return try finite(pow(a, b))
            }
        case .equal:
            return .boolean(try equal(left, right) ?? false)
        case .notEqual:
            return .boolean(!(try equal(left, right) ?? false))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let order = try compare(left, right) else { return .boolean(false) }
            switch op {
            case .less: return .boolean(order < 0)
            case .lessOrEqual: return .boolean(order <= 0)
            case .greater: return .boolean(order > 0)
            default: return .boolean(order >= 0)
            }
        case .and, .or:
            preconditionFailure("the evaluator short-circuits && and ||")
        }
    }

    private static func isText(_ value: FormulaValue) -> Bool {
        if case .text = value { return true }
        return false
    }

    /// `+` and `-` on numbers, dates and date/times; text on one side takes the other's meaning.
    private static func arithmetic(_ op: FormulaOperator, _ left: FormulaValue, _ right: FormulaValue) throws(FormulaEvaluationError) -> FormulaValue {
        let add = op == .add
        switch (left, right) {
        case (.number(let a), .number(let b)): return try finite(add ? a + b : a - b)
        case (.date(let days), .number(let amount)): return try .date(days + wholeDays(add ? amount : -amount))
        case (.number(let amount), .date(let days)) where add: return try .date(days + wholeDays(amount))
        case (.dateTime(let time), .number(let amount)): return .dateTime(time + (try milliseconds(add ? amount : -amount)))
        case (.number(let amount), .dateTime(let time)) where add: return .dateTime(time + (try milliseconds(amount)))
        case (.date(let a), .date(let b)) where !add: return .number(Double(a - b))
        case (.dateTime(let a), .dateTime(let b)) where !add: return .number(Double(a - b) / Double(FormulaCalendar.millisecondsPerDay))
        case (.text(let text), _):
            return try arithmetic(op, try reading(text, beside: right, subtracting: !add), right)
        case (_, .text(let text)):
            return try arithmetic(op, left, try reading(text, beside: left, subtracting: !add))
        default:
            throw FormulaEvaluationError("\(op.rawValue) cannot \(add ? "add" : "subtract") \(right.type) \(add ? "to" : "from") \(left.type)")
        }
    }

    /// Text beside a number is read as a number, else a date or date/time (`"2024-01-31" + 30`);
    /// beside a date it is a date when subtracted from or subtracting one, else a number of days.
    private static func reading(_ text: String, beside other: FormulaValue, subtracting: Bool) throws(FormulaEvaluationError) -> FormulaValue {
        let candidates: [FormulaType]
        switch other {
        case .date: candidates = subtracting ? [.date, .number] : [.number]
        case .dateTime: candidates = subtracting ? [.dateTime, .number] : [.number]
        default: candidates = [.number, .date, .dateTime]
        }
        for type in candidates {
            if let value = try? FormulaValue.text(text).converted(to: type) { return value }
        }
        throw FormulaEvaluationError("\(quoted(text)) is not a \(candidates.map(\.description).joined(separator: " or "))")
    }

    private static func wholeDays(_ amount: Double) throws(FormulaEvaluationError) -> Int {
        guard amount.isFinite, abs(amount) < 4_000_000 else { throw FormulaEvaluationError("\(FormulaNumber.format(amount)) days is out of range") }
        return Int(amount)
    }

    private static func milliseconds(_ days: Double) throws(FormulaEvaluationError) -> Int64 {
        guard days.isFinite, abs(days) < 4_000_000 else { throw FormulaEvaluationError("\(FormulaNumber.format(days)) days is out of range") }
        return Int64((days * Double(FormulaCalendar.millisecondsPerDay)).rounded())
    }

    /// Whether two values are equal: `nil` when one is blank and the other not (blank equals only
    /// blank). Text beside another type is read as that type; text that does not read so is unequal.
    static func equal(_ left: FormulaValue, _ right: FormulaValue) throws(FormulaEvaluationError) -> Bool? {
        switch (left, right) {
        case (.blank, .blank): return true
        case (.blank, _), (_, .blank): return nil
        case (.text(let a), .text(let b)): return a == b
        case (.text, _): return (try? left.converted(to: right.type)).map { $0 == right } ?? false
        case (_, .text): return (try? right.converted(to: left.type)).map { $0 == left } ?? false
        case (.number(let a), .number(let b)): return a == b
        default:
            if left.type != right.type { throw FormulaEvaluationError("= compares \(left.type) with \(right.type)") }
            return left == right
        }
    }

    /// The order of two values (negative, zero, positive), or `nil` when one is blank. Text beside
    /// another type must read as that type.
    static func compare(_ left: FormulaValue, _ right: FormulaValue) throws(FormulaEvaluationError) -> Int? {
        switch (left, right) {
        case (.blank, _), (_, .blank): return nil
        case (.text(let a), .text(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.text, _): return try compare(try left.converted(to: right.type), right)
        case (_, .text): return try compare(left, try right.converted(to: left.type))
        case (.number(let a), .number(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.date(let a), .date(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.dateTime(let a), .dateTime(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.boolean(let a), .boolean(let b)): return a == b ? 0 : (!a ? -1 : 1)
        default: throw FormulaEvaluationError("cannot compare \(left.type) with \(right.type)")
        }
    }
}
