/// Parses formula text into a typed ``FormulaNode``: precedence climbing over the operator levels,
/// then unary `-` and `!`, `^`, and primaries. Types are checked as the tree is built, so an
/// error names the column where the offending part starts.
struct FormulaParser {
    /// An expression with its static type and the column it starts at.
    struct Typed {
        var node: FormulaNode
        var type: FormulaType
        var column: Int
        /// The height of the tree below (1 for a literal or a field): the evaluator recurses that deep.
        var height = 1
    }

    private let tokens: [FormulaToken]
    /// Types of fields known before any record is read (by lower-cased name).
    private let fieldTypes: [String: FormulaType]
    private var position = 0
    /// Nesting depth, bounded so a hostile formula cannot exhaust the stack.
    private var depth = 0
    static let maximumDepth = 200
    /// The tallest tree evaluated (`1 + 1 + … + 1` builds one without nesting parentheses).
    static let maximumHeight = 1000

    init(_ text: String, fieldTypes: [String: FormulaType] = [:]) throws(FormulaSyntaxError) {
        tokens = try FormulaLexer.tokens(text)
        self.fieldTypes = fieldTypes
    }

    /// The whole formula; anything left after one expression is an error.
    mutating func parse() throws(FormulaSyntaxError) -> Typed {
        guard case .end = tokens[0].kind, tokens.count == 1 else {
            let expression = try parseLevel(0)
            guard case .end = current.kind else { throw unexpected(current) }
            return expression
        }
        throw FormulaSyntaxError(column: 1, "the formula is empty")
    }

    private var current: FormulaToken { tokens[position] }

    private func unexpected(_ token: FormulaToken) -> FormulaSyntaxError {
        switch token.kind {
        case .end: FormulaSyntaxError(column: token.column, "the formula ends too soon")
        case .number(let value): FormulaSyntaxError(column: token.column, "unexpected number \(FormulaNumber.format(value))")
        case .text(let text): FormulaSyntaxError(column: token.column, "unexpected text \(quoted(text))")
        case .name(let name): FormulaSyntaxError(column: token.column, "unexpected \(name) (a missing operator or comma?)")
        case .symbol(let symbol): FormulaSyntaxError(column: token.column, "unexpected \(symbol)")
        }
    }

    private mutating func expect(_ symbol: String) throws(FormulaSyntaxError) {
        guard case .symbol(symbol) = current.kind else {
            if case .end = current.kind { throw FormulaSyntaxError(column: current.column, "missing \(symbol)") }
            throw FormulaSyntaxError(column: current.column, "expected \(symbol), found \(describe(current))")
        }
        position += 1
    }

    private func describe(_ token: FormulaToken) -> String {
        switch token.kind {
        case .end: "the end"
        case .number(let value): FormulaNumber.format(value)
        case .text(let text): quoted(text)
        case .name(let name): name
        case .symbol(let symbol): symbol
        }
    }

    private mutating func nest() throws(FormulaSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw FormulaSyntaxError(column: current.column, "the formula nests deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseLevel(_ level: Int) throws(FormulaSyntaxError) -> Typed {
        guard level < FormulaOperator.levels.count else { return try parseUnary() }
        try nest()
        defer { depth -= 1 }
        var left = try parseLevel(level + 1)
        while case .symbol(let symbol) = current.kind, let op = FormulaOperator.levels[level][symbol] {
            position += 1
            let right = try parseLevel(level + 1)
            left = try FormulaTypes.binary(op, left, right)
            if left.height > Self.maximumHeight {
                throw FormulaSyntaxError(column: right.column, "the formula is too long a chain of operators (over \(Self.maximumHeight))")
            }
        }
        return left
    }

    private mutating func parseUnary() throws(FormulaSyntaxError) -> Typed {
        let token = current
        guard case .symbol(let symbol) = token.kind, symbol == "-" || symbol == "+" || symbol == "!" else { return try parsePower() }
        position += 1
        try nest()
        defer { depth -= 1 }
        let operand = try parseUnary()
        if symbol == "!" {
            try FormulaTypes.require(operand, .boolean, "! (NOT)")
            return Typed(node: .not(operand.node), type: .boolean, column: token.column, height: operand.height + 1)
        }
        try FormulaTypes.require(operand, .number, "unary \(symbol)")
        return Typed(node: symbol == "-" ? .negate(operand.node) : operand.node, type: .number, column: token.column, height: operand.height + 1)
    }

    private mutating func parsePower() throws(FormulaSyntaxError) -> Typed {
        let base = try parsePrimary()
        guard case .symbol("^") = current.kind else { return base }
        position += 1
        try nest()
        defer { depth -= 1 }
        let exponent = try parseUnary()
        return try FormulaTypes.binary(.power, base, exponent)
    }

    private mutating func parsePrimary() throws(FormulaSyntaxError) -> Typed {
        let token = current
        position += 1
        switch token.kind {
        case .number(let value): return Typed(node: .literal(.number(value)), type: .number, column: token.column)
        case .text(let text): return Typed(node: .literal(text.isEmpty ? .blank : .text(text)), type: .text, column: token.column)
        case .symbol("("):
            try nest()
            defer { depth -= 1 }
            var inner = try parseLevel(0)
            try expect(")")
            inner.column = token.column
            return inner
        case .name(let name):
            if case .symbol("(") = current.kind { return try parseCall(name, at: token.column) }
            switch name.uppercased() {
            case "TRUE": return Typed(node: .literal(.boolean(true)), type: .boolean, column: token.column)
            case "FALSE": return Typed(node: .literal(.boolean(false)), type: .boolean, column: token.column)
            case "NULL": return Typed(node: .literal(.blank), type: .any, column: token.column)
            default: break
            }
            if name.hasPrefix("$") {
                throw FormulaSyntaxError(column: token.column, "\(name): global variables such as $User are not available outside the org")
            }
            let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !parts.contains(where: \.isEmpty) else { throw FormulaSyntaxError(column: token.column, "\(name) is not a field name") }
            return Typed(node: .field(name, parts), type: fieldTypes[name.lowercased()] ?? .any, column: token.column)
        default:
            position -= 1
            throw unexpected(token)
        }
    }

    private mutating func parseCall(_ name: String, at column: Int) throws(FormulaSyntaxError) -> Typed {
        guard let function = FormulaFunction.named(name.uppercased()) else {
            if FormulaFunction.unavailable.contains(name.uppercased()) {
                throw FormulaSyntaxError(column: column, "\(name.uppercased()) only has a meaning in the org's user interface")
            }
            throw FormulaSyntaxError(column: column, "unknown function \(name)")
        }
        position += 1
        try nest()
        defer { depth -= 1 }
        var arguments: [Typed] = []
        if case .symbol(")") = current.kind {
            position += 1
        } else {
            while true {
                arguments.append(try parseLevel(0))
                if case .symbol(",") = current.kind { position += 1; continue }
                try expect(")")
                break
            }
        }
        return try FormulaTypes.call(function, arguments, at: column)
    }
}
