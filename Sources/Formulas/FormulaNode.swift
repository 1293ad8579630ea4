import Foundation

/// A compiled expression: what the parser builds and the evaluator walks.
indirect enum FormulaNode: Sendable {
    case literal(FormulaValue)
    /// A field reference: the name as written, and its parts split at dots.
    case field(String, [String])
    case negate(FormulaNode)
    case not(FormulaNode)
    /// A binary operator; `textual` when `+` joins text rather than adds.
    case binary(FormulaOperator, FormulaNode, FormulaNode, textual: Bool)
    /// A function with arguments, each converted to the type the function takes before the call.
    case call(FormulaFunction, [FormulaNode])
    /// `REGEX(text, 'pattern')` with its literal pattern compiled once.
    case regex(FormulaNode, FormulaRegex)
}

/// The binary operators, by precedence from lowest (`||`) to highest (`^`).
enum FormulaOperator: String, Sendable {
    case or = "||", and = "&&"
    case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case concatenate = "&"
    case add = "+", subtract = "-"
    case multiply = "*", divide = "/"
    case power = "^"

    /// The operators at one precedence level, lowest first; `^` binds tightest.
    static let levels: [[String: FormulaOperator]] = [
        ["||": .or], ["&&": .and],
        ["=": .equal, "==": .equal, "<>": .notEqual, "!=": .notEqual, "<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual],
        ["&": .concatenate], ["+": .add, "-": .subtract], ["*": .multiply, "/": .divide],
    ]

    var isComparison: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: true
        default: false
        }
    }
}

/// A compiled regular expression (ICU syntax, close to Java's, which the org uses) that must
/// match the whole text, as Java's `matches` does.
struct FormulaRegex: @unchecked Sendable {
    let expression: NSRegularExpression

    init(_ pattern: String) throws {
        expression = try NSRegularExpression(pattern: "(?:" + pattern + ")\\z", options: [])
    }

    func matches(_ text: String) -> Bool {
        expression.firstMatch(in: text, options: [.anchored], range: NSRange(text.startIndex..., in: text)) != nil
    }
}
