/// An aggregate function over a field in a select list: `COUNT(Id)`, `MAX(Amount) biggest`.
public struct SOQLAggregate: Sendable, Hashable, CustomStringConvertible {
    /// The aggregate functions SOQL has.
    public enum Function: String, Sendable, Hashable {
        case count = "COUNT"
        case countDistinct = "COUNT_DISTINCT"
        case min = "MIN"
        case max = "MAX"
        case sum = "SUM"
        case avg = "AVG"
    }

    public var function: Function
    public var field: SOQLFieldPath
    /// The alias naming the result column; unaliased aggregates are `expr0`, `expr1`… in results.
    public internal(set) var alias: String?

    /// An aggregate, its alias checked to be an identifier.
    public init(_ function: Function, _ field: SOQLFieldPath, alias: String? = nil) throws(SOQLError) {
        self.function = function
        self.field = field
        self.alias = try alias.map { (alias) throws(SOQLError) in try SOQLParser.alias(alias) }
    }

    init(function: Function, field: SOQLFieldPath, alias: String?) {
        self.function = function
        self.field = field
        self.alias = alias
    }

    /// `MAX(Amount) biggest`.
    public var description: String { SOQLPrinter.aggregate(self) }
}
