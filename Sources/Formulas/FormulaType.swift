/// The type of a formula expression, as far as it is known before any record is read.
public enum FormulaType: String, Sendable, Hashable, CustomStringConvertible {
    case text, number, boolean, date, dateTime
    /// A field reference or `NULL`: its type is known only from the record's value.
    case any

    public var description: String {
        switch self {
        case .dateTime: "date/time"
        case .any: "any type"
        default: rawValue
        }
    }

    /// Whether a value of this static type may stand where `expected` is required: equal types,
    /// or either side unknown until a record is read.
    func fits(_ expected: FormulaType) -> Bool {
        self == expected || self == .any || expected == .any
    }
}
