/// The arguments of a function call, evaluated and converted: up to three held inline, so most
/// calls make no array.
struct FormulaArguments: RandomAccessCollection, Sendable {
    private var first = FormulaValue.blank
    private var second = FormulaValue.blank
    private var third = FormulaValue.blank
    private var rest: [FormulaValue] = []
    private(set) var count = 0

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> FormulaValue {
        precondition(position >= 0 && position < count, "FormulaArguments: index out of range")
        switch position {
        case 0: return first
        case 1: return second
        case 2: return third
        default: return rest[position - 3]
        }
    }

    mutating func append(_ value: FormulaValue) {
        switch count {
        case 0: first = value
        case 1: second = value
        case 2: third = value
        default: rest.append(value)
        }
        count += 1
    }
}
