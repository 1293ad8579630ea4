/// The static type rules: what each operator and function takes and gives. A type known on both
/// sides must fit, as in the org; a field's type is known only when a record is read.
enum FormulaTypes {
    typealias Typed = FormulaParser.Typed

    static func require(_ operand: Typed, _ expected: FormulaType, _ what: String) throws(FormulaSyntaxError) {
        guard operand.type.fits(expected) else {
            throw FormulaSyntaxError(column: operand.column, "\(what) expects \(expected), not \(operand.type)")
        }
    }

    static func binary(_ op: FormulaOperator, _ left: Typed, _ right: Typed) throws(FormulaSyntaxError) -> Typed {
        let type: FormulaType
        var textual = false
        switch op {
        case .or, .and:
            try require(left, .boolean, op.rawValue)
            try require(right, .boolean, op.rawValue)
            type = .boolean
        case .concatenate:
            try require(left, .text, "& (joining text; use TEXT() for other values)")
            try require(right, .text, "& (joining text; use TEXT() for other values)")
            type = .text
        case .multiply, .divide, .power:
            try require(left, .number, op.rawValue)
            try require(right, .number, op.rawValue)
            type = .number
        case .add, .subtract:
            (type, textual) = try arithmetic(op, left, right)
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            if left.type != .any, right.type != .any, left.type != right.type {
                throw FormulaSyntaxError(column: right.column, "\(op.rawValue) compares \(left.type) with \(right.type)")
            }
            type = .boolean
        }
        return Typed(node: .binary(op, left.node, right.node, textual: textual), type: type, column: left.column,
                     height: max(left.height, right.height) + 1)
    }

    /// `+` and `-`: numbers, a date or date/time moved by days, the days between two dates, and
    /// text joined by `+`.
    private static func arithmetic(_ op: FormulaOperator, _ left: Typed, _ right: Typed) throws(FormulaSyntaxError) -> (FormulaType, Bool) {
        switch (left.type, right.type) {
        // (A `where` clause binds only the last pattern of a case, so each pattern has its own case.)
        case (.number, .number): return (.number, false)
        case (.date, .number), (.dateTime, .number): return (left.type, false)
        case (.number, .date) where op == .add: return (right.type, false)
        case (.number, .dateTime) where op == .add: return (right.type, false)
        case (.date, .date) where op == .subtract: return (.number, false)
        case (.dateTime, .dateTime) where op == .subtract: return (.number, false)
        case (.text, .text) where op == .add: return (.text, true)
        case (.text, .any) where op == .add: return (.text, true)
        case (.any, .text) where op == .add: return (.text, true)
        case (.any, .any), (.any, .number), (.number, .any): return (.any, false)
        case (.date, .any), (.dateTime, .any): return (op == .add ? left.type : .any, false)
        case (.any, .date), (.any, .dateTime): return (op == .add ? right.type : .number, false)
        default:
            let verb = op == .add ? "adds" : "subtracts"
            throw FormulaSyntaxError(column: right.column, "\(op.rawValue) \(verb) \(right.type) \(op == .add ? "to" : "from") \(left.type), which the org does not allow")
        }
    }

    static func call(_ function: FormulaFunction, _ arguments: [Typed], at column: Int) throws(FormulaSyntaxError) -> Typed {
        guard function.arity.contains(arguments.count) else {
            let range = function.arity
            let expected = range.upperBound == Int.max ? "at least \(range.lowerBound)" : range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
            throw FormulaSyntaxError(column: column, "\(function.name) takes \(expected) argument\(expected == "1" ? "" : "s"), not \(arguments.count)")
        }
        for (index, argument) in arguments.enumerated() {
            let expected = function.parameter(index)
            guard argument.type.fits(expected) else {
                throw FormulaSyntaxError(column: argument.column, "\(function.name) expects \(expected) for argument \(index + 1), not \(argument.type)")
            }
        }
        let types = arguments.map(\.type)
        if let problem = function.check?(types) { throw FormulaSyntaxError(column: column, "\(function.name): \(problem)") }
        if function.name == "REGEX", case .literal(let pattern) = arguments[1].node {
            guard let regex = try? FormulaRegex(pattern.text) else {
                throw FormulaSyntaxError(column: arguments[1].column, "REGEX: \(quoted(pattern.text)) is not a regular expression")
            }
            return Typed(node: .regex(arguments[0].node, regex), type: .boolean, column: column, height: arguments[0].height + 1)
        }
        return Typed(node: .call(function, arguments.map(\.node)), type: function.result(types), column: column,
                     height: (arguments.map(\.height).max() ?? 0) + 1)
    }

    /// The type two branches share (`IF`, `CASE`, `BLANKVALUE`): the known one when they agree
    /// or one is unknown.
    static func common(_ types: [FormulaType]) -> FormulaType {
        let known = Set(types.filter { $0 != .any })
        return known.count == 1 ? known.first! : .any
    }

    /// Checks that branches do not mix known types (`IF(x, 1, "a")`).
    static func sameKind(_ types: [FormulaType]) -> String? {
        let known = Set(types.filter { $0 != .any })
        guard known.count > 1 else { return nil }
        return "its results mix \(known.map(\.description).sorted().joined(separator: " and "))"
    }
}
