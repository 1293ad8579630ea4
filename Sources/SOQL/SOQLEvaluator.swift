import JSON

/// Evaluates WHERE conditions against records held as JSON objects, with Salesforce's semantics.
///
/// - `=`, `!=`, `LIKE`, `IN` compare strings ignoring case; `LIKE` takes `%` and `_` wildcards and
///   backslash escapes. A missing field is `null`: `= null` matches it, `!= 'x'` matches it, ordering
///   comparisons never do.
/// - Numbers compare numerically; dates and datetimes as instants, so a stored
///   `2024-01-31T12:00:00.000+0000` equals the literal `2024-01-31T12:00:00Z`. A date literal covers its
///   whole UTC day, and relative literals (`LAST_N_DAYS:7`) are resolved against `nowMilliseconds`.
/// - `INCLUDES` / `EXCLUDES` read multi-select picklist values separated by `;`; an operand `'a;b'`
///   needs both.
/// - Semi-joins and anti-joins ask `subqueryValues` for the values the subquery selects. It is called
///   each time one is evaluated, so a caller matching many records should cache its answers.
public struct SOQLEvaluator: Sendable {
    /// Reads a field, possibly through parent relationships, from a record; `nil` when absent.
    public typealias FieldResolver = @Sendable (JSONObject, SOQLFieldPath) -> JSONValue?
    /// The values of the one field a semi-join or anti-join subquery selects.
    public typealias SubqueryResolver = @Sendable (SOQLQuery) throws -> [JSONValue]

    /// "Now", in milliseconds since 1970-01-01T00:00:00Z, for relative date literals.
    public var nowMilliseconds: Int64
    public var fieldValue: FieldResolver
    public var subqueryValues: SubqueryResolver?

    public init(
        nowMilliseconds: Int64, fieldValue: @escaping FieldResolver = SOQLEvaluator.nestedValue,
        subqueryValues: SubqueryResolver? = nil
    ) {
        self.nowMilliseconds = nowMilliseconds
        self.fieldValue = fieldValue
        self.subqueryValues = subqueryValues
    }

    /// The default resolver: follows each relationship into the nested object of that name
    /// (`Account.Name` reads `record["Account"]["Name"]`), matching names exactly or else ignoring case.
    public static func nestedValue(in record: JSONObject, at path: SOQLFieldPath) -> JSONValue? {
        var object = record
        for (offset, component) in path.components.enumerated() {
            guard let value = object[component] ?? caselessMember(component, of: object) else { return nil }
            if offset == path.components.count - 1 { return value }
            guard case .object(let nested) = value else { return nil }
            object = nested
        }
        return nil
    }

    private static func caselessMember(_ name: String, of object: JSONObject) -> JSONValue? {
        let lowered = name.lowercased()
        return object.keys.first { $0.lowercased() == lowered }.flatMap { object[$0] }
    }

    /// Whether `record` satisfies `condition`; rethrows `subqueryValues` errors, and throws
    /// `SOQLEvaluationError.subqueryWithoutResolver` for a subquery when there is no resolver.
    public func matches(_ condition: SOQLCondition, record: JSONObject) throws -> Bool {
        switch condition {
        case .and(let members):
            for member in members where try !matches(member, record: record) { return false }
            return true
        case .or(let members):
            for member in members where try matches(member, record: record) { return true }
            return false
        case .not(let negated):
            return try !matches(negated, record: record)
        case .comparison(let comparison):
            return try matches(comparison, record: record)
        }
    }

    private func matches(_ comparison: SOQLComparison, record: JSONObject) throws -> Bool {
        let value = fieldValue(record, comparison.field) ?? .null
        switch (comparison.operator, comparison.operand) {
        case (.in, .list(let values)), (.notIn, .list(let values)):
            return isAny(value, of: values) == (comparison.operator == .in)
        case (.in, .subquery(let subquery)), (.notIn, .subquery(let subquery)):
            guard let subqueryValues else { throw SOQLEvaluationError.subqueryWithoutResolver(subquery) }
            let values = try subqueryValues(subquery).compactMap(SOQLValueComparison.literal)
            return isAny(value, of: values) == (comparison.operator == .in)
        case (.includes, .list(let values)):
            return SOQLValueComparison.includes(value, values)
        case (.excludes, .list(let values)):
            return !SOQLValueComparison.includes(value, values)
        case (.like, .value(.string(let pattern))):
            guard case .string(let text) = value else { return false }
            return SOQLLikePattern(pattern).matches(text)
        case (let comparisonOperator, .value(let literal)) where !comparisonOperator.takesList:
            return SOQLValueComparison.holds(value, comparisonOperator, literal, now: nowMilliseconds)
        default:
            return false
        }
    }

    private func isAny(_ value: JSONValue, of values: [SOQLValue]) -> Bool {
        values.contains { SOQLValueComparison.holds(value, .equal, $0, now: nowMilliseconds) }
    }
}
