import JSON

/// The order an `ORDER BY` puts records in, to sort JSON records:
/// `records.sort(by: SOQLRecordOrder(query.orderBy).areInIncreasingOrder)`.
///
/// Keys apply in turn; nulls (and missing fields) go first for `ASC` and last for `DESC` unless `NULLS
/// FIRST/LAST` says otherwise; strings compare ignoring case, numbers numerically, date and datetime
/// strings as instants.
public struct SOQLRecordOrder: Sendable {
    public var orderings: [SOQLOrdering]
    public var fieldValue: SOQLEvaluator.FieldResolver

    public init(
        _ orderings: [SOQLOrdering], fieldValue: @escaping SOQLEvaluator.FieldResolver = SOQLEvaluator.nestedValue
    ) {
        self.orderings = orderings
        self.fieldValue = fieldValue
    }

    /// Whether `lhs` sorts strictly before `rhs`.
    public func areInIncreasingOrder(_ lhs: JSONObject, _ rhs: JSONObject) -> Bool {
        for ordering in orderings {
            let left = fieldValue(lhs, ordering.field) ?? .null
            let order = compare(left, fieldValue(rhs, ordering.field) ?? .null, ordering)
            if order != 0 { return order < 0 }
        }
        return false
    }

    private func compare(_ lhs: JSONValue, _ rhs: JSONValue, _ ordering: SOQLOrdering) -> Int {
        switch (lhs.isNull, rhs.isNull) {
        case (true, true): return 0
        case (true, false): return ordering.nullsFirst ? -1 : 1
        case (false, true): return ordering.nullsFirst ? 1 : -1
        case (false, false):
            let order = SOQLValueComparison.order(lhs, rhs)
            return ordering.direction == .ascending ? order : -order
        }
    }
}
