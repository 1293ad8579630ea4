/// A WHERE condition: comparisons combined with AND, OR and NOT.
///
/// The parser is faithful to SOQL: AND and OR cannot be mixed at one level without parentheses
/// (`A AND B OR C` is `MALFORMED_QUERY` at the `OR`), and `NOT` applies to the comparison or parenthesised
/// group right after it. A chain `A AND B AND C` parses as one `.and` with three members. The printer
/// parenthesises nested groups and a `NOT` inside a group, so its output is always valid SOQL.
public indirect enum SOQLCondition: Sendable, Hashable, CustomStringConvertible {
    case and([SOQLCondition])
    case or([SOQLCondition])
    case not(SOQLCondition)
    case comparison(SOQLComparison)

    /// `field op value` with the field name checked; a list operator gets a one-value list.
    public static func compare(
        _ field: String, _ operator: SOQLComparisonOperator, _ value: SOQLValue
    ) throws(SOQLError) -> SOQLCondition {
        let operand: SOQLOperand = `operator`.takesList ? .list([value]) : .value(value)
        return .comparison(SOQLComparison(try SOQLFieldPath(field), `operator`, operand))
    }

    /// `field IN ('a', 'b')` (or `NOT IN` when `negated`) from Swift strings, each quoted and escaped.
    ///
    /// SOQL has no empty list, so an empty `values` throws the error Salesforce gives for `field IN ()`.
    public static func isIn(_ field: String, _ values: [String], negated: Bool = false) throws(SOQLError)
        -> SOQLCondition
    {
        let comparison = SOQLComparison(
            try SOQLFieldPath(field), negated ? .notIn : .in, .list(values.map(SOQLValue.string)))
        guard values.isEmpty else { return .comparison(comparison) }
        let text = comparison.description
        throw SOQLError(
            .malformedQuery, "unexpected token: ')'",
            at: SOQLSourcePosition(row: 1, column: text.unicodeScalars.count), in: text)
    }

    /// The condition as SOQL text (no `WHERE`).
    public var description: String { SOQLPrinter.condition(self) }
}
