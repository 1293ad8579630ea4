/// A field compared with a value, a list or a subquery: `Name LIKE 'A%'`, `Id IN (SELECT AccountId FROM Contact)`;
/// in a `HAVING` clause, an aggregate of a field: `COUNT(Id) > 1`.
public struct SOQLComparison: Sendable, Hashable, CustomStringConvertible {
    public var field: SOQLFieldPath
    /// `HAVING` only: the aggregate of `field` compared (`COUNT()` is `COUNT` of `Id`).
    public var aggregate: SOQLAggregate.Function?
    public var `operator`: SOQLComparisonOperator
    public var operand: SOQLOperand

    /// A comparison; a list operator needs a `.list` or `.subquery` operand, any other a `.value`.
    public init(_ field: SOQLFieldPath, _ operator: SOQLComparisonOperator, _ operand: SOQLOperand) {
        self.field = field
        self.operator = `operator`
        self.operand = operand
    }

    /// `Name LIKE 'A%'`.
    public var description: String { SOQLPrinter.comparison(self) }
}
