import JSON
import SOQL

/// A field path from dotted text.
func path(_ text: String) throws -> SOQLFieldPath {
    try SOQLFieldPath(text)
}

/// `field op operand` as a condition.
func comparison(_ field: String, _ op: SOQLComparisonOperator, _ operand: SOQLOperand) throws -> SOQLCondition {
    .comparison(SOQLComparison(try path(field), op, operand))
}

/// `field op value` as a condition.
func comparison(_ field: String, _ op: SOQLComparisonOperator, _ value: SOQLValue) throws -> SOQLCondition {
    try comparison(field, op, .value(value))
}

/// The error parsing `text` as a query raises, or `nil` when it parses.
func queryError(_ text: String) -> SOQLError? {
    do {
        _ = try SOQL.parseQuery(text)
        return nil
    } catch {
        return error
    }
}

/// The error parsing `text` as a condition raises, or `nil` when it parses.
func conditionError(_ text: String) -> SOQLError? {
    do {
        _ = try SOQL.parseCondition(text)
        return nil
    } catch {
        return error
    }
}

/// The object payload of a JSON object literal.
func record(_ value: JSONValue) -> JSONObject {
    value.objectValue ?? JSONObject()
}

/// A datetime literal from its text, for building expected values.
func dateTime(_ text: String) throws -> SOQLDateTime {
    guard let value = SOQLDateTime(parsing: text, requiringOffset: true) else {
        throw TestFailure("not a datetime: \(text)")
    }
    return value
}

/// A date from its text.
func date(_ text: String) throws -> SOQLDate {
    guard let value = SOQLDate(parsing: text) else { throw TestFailure("not a date: \(text)") }
    return value
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
