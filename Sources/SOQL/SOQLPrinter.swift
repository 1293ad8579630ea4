/// Writes canonical SOQL text from the AST: keywords upper-case, strings quoted with `SOQL.quote`,
/// datetimes in Salesforce's `2024-01-31T12:00:00.000Z` form, groups parenthesised where needed.
enum SOQLPrinter {
    static func query(_ query: SOQLQuery) -> String {
        var text = "SELECT \(query.select.map(selectItem).joined(separator: ", ")) FROM \(query.from)"
        if let whereCondition = query.whereCondition { text += " WHERE \(condition(whereCondition))" }
        if let withClause = query.withClause { text += " WITH \(withClause)" }
        if !query.groupBy.isEmpty { text += " GROUP BY \(query.groupBy.map(\.description).joined(separator: ", "))" }
        if let having = query.having { text += " HAVING \(condition(having))" }
        if !query.orderBy.isEmpty { text += " ORDER BY \(query.orderBy.map(ordering).joined(separator: ", "))" }
        if let limit = query.limit { text += " LIMIT \(limit)" }
        if let offset = query.offset { text += " OFFSET \(offset)" }
        if let forClause = query.forClause { text += " FOR \(forClause)" }
        return text
    }

    static func selectItem(_ item: SOQLSelectItem) -> String {
        switch item {
        case .field(let field): return field.description
        case .label(let field): return "toLabel(\(field))"
        case .count: return "COUNT()"
        case .aggregate(let aggregate): return self.aggregate(aggregate)
        case .subquery(let subquery): return "(\(query(subquery)))"
        }
    }

    static func aggregate(_ aggregate: SOQLAggregate) -> String {
        let call = "\(aggregate.function.rawValue)(\(aggregate.field))"
        return aggregate.alias.map { "\(call) \($0)" } ?? call
    }

    static func ordering(_ ordering: SOQLOrdering) -> String {
        var text = ordering.field.description
        if ordering.direction == .descending { text += " DESC" }
        if let nulls = ordering.nulls { text += " NULLS \(nulls.rawValue)" }
        return text
    }

    static func condition(_ condition: SOQLCondition) -> String {
        switch condition {
        case .and(let members): return members.map(member).joined(separator: " AND ")
        case .or(let members): return members.map(member).joined(separator: " OR ")
        case .not(let negated):
            if case .comparison(let comparison) = negated { return "NOT \(self.comparison(comparison))" }
            return "NOT (\(self.condition(negated)))"
        case .comparison(let comparison): return self.comparison(comparison)
        }
    }

    /// A member of an AND or OR: anything but a comparison goes in parentheses.
    private static func member(_ condition: SOQLCondition) -> String {
        if case .comparison(let comparison) = condition { return self.comparison(comparison) }
        return "(\(self.condition(condition)))"
    }

    static func comparison(_ comparison: SOQLComparison) -> String {
        let left = comparison.aggregate.map { "\($0.rawValue)(\(comparison.field))" } ?? comparison.field.description
        return "\(left) \(comparison.operator.rawValue) \(operand(comparison.operand))"
    }

    static func operand(_ operand: SOQLOperand) -> String {
        switch operand {
        case .value(let value): return self.value(value)
        case .list(let values): return "(\(values.map(value).joined(separator: ", ")))"
        case .subquery(let subquery): return "(\(query(subquery)))"
        }
    }

    static func value(_ value: SOQLValue) -> String {
        switch value {
        case .null: return "null"
        case .boolean(let boolean): return boolean ? "true" : "false"
        case .integer(let integer): return String(integer)
        case .decimal(let decimal): return decimalText(decimal)
        case .string(let string): return SOQL.quote(string)
        case .date(let date): return date.description
        case .dateTime(let dateTime): return dateTime.description
        case .dateLiteral(let literal): return literal.description
        }
    }

    /// Plain decimal notation with at least one fractional digit (SOQL has no exponent syntax).
    static func decimalText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let shortest = "\(value)"
        guard let exponentIndex = shortest.firstIndex(where: { $0 == "e" || $0 == "E" }),
            let exponent = Int(shortest[shortest.index(after: exponentIndex)...])
        else { return shortest }
        let mantissa = shortest[..<exponentIndex]
        let sign = mantissa.hasPrefix("-") ? "-" : ""
        let unsigned = mantissa.drop { $0 == "-" }
        let digits = unsigned.filter { $0 != "." }
        let point = (unsigned.firstIndex(of: ".").map { unsigned.distance(from: unsigned.startIndex, to: $0) }
            ?? unsigned.count) + exponent
        if point <= 0 { return "\(sign)0.\(String(repeating: "0", count: -point))\(digits)" }
        if point >= digits.count { return "\(sign)\(digits)\(String(repeating: "0", count: point - digits.count)).0" }
        return "\(sign)\(digits.prefix(point)).\(digits.dropFirst(point))"
    }
}
