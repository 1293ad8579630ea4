/// The operator of a comparison; the raw value is how it prints (`<>` parses as `!=`).
public enum SOQLComparisonOperator: String, Sendable, Hashable {
    case equal = "="
    case notEqual = "!="
    case lessThan = "<"
    case lessThanOrEqual = "<="
    case greaterThan = ">"
    case greaterThanOrEqual = ">="
    case like = "LIKE"
    case `in` = "IN"
    case notIn = "NOT IN"
    case includes = "INCLUDES"
    case excludes = "EXCLUDES"

    /// Whether the right-hand side is a parenthesised list (or, for `IN`/`NOT IN`, a subquery).
    public var takesList: Bool {
        switch self {
        case .in, .notIn, .includes, .excludes: return true
        default: return false
        }
    }
}
