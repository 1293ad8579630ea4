extension FormulaFunction {
    /// IF CASE AND OR NOT ISBLANK ISNULL BLANKVALUE NULLVALUE ISNUMBER ISPICKVAL.
    static let logical: [FormulaFunction] = [
        FormulaFunction(name: "IF", arity: 3...3, parameters: [.boolean, .any], result: { FormulaTypes.common(Array($0.dropFirst())) },
                        check: { FormulaTypes.sameKind(Array($0.dropFirst())) }, implementation: .special(.if)),
        FormulaFunction(name: "CASE", arity: 4...Int.max, parameters: [.any], result: { types in
            FormulaTypes.common(stride(from: 2, to: types.count, by: 2).map { types[$0] } + [types[types.count - 1]])
        }, check: { types in
            if types.count % 2 != 0 { return "it needs an else result: CASE(expression, value1, result1, …, else_result)" }
            let values = stride(from: 1, to: types.count - 1, by: 2).map { types[$0] }
            if let problem = FormulaTypes.sameKind([types[0]] + values) { return "the expression and the values to match: \(problem)" }
            return FormulaTypes.sameKind(stride(from: 2, to: types.count, by: 2).map { types[$0] } + [types[types.count - 1]])
        }, implementation: .special(.case)),
        FormulaFunction(name: "AND", arity: 1...Int.max, parameters: [.boolean], result: { _ in .boolean }, implementation: .special(.and)),
        FormulaFunction(name: "OR", arity: 1...Int.max, parameters: [.boolean], result: { _ in .boolean }, implementation: .special(.or)),
        eager("NOT", 1...1, [.boolean], gives: .boolean) { arguments, _ in .boolean(!truth(arguments[0])) },
        FormulaFunction(name: "ISBLANK", arity: 1...1, parameters: [.any], result: { _ in .boolean }, implementation: .special(.isBlank)),
        FormulaFunction(name: "ISNULL", arity: 1...1, parameters: [.any], result: { _ in .boolean }, implementation: .special(.isBlank)),
        FormulaFunction(name: "BLANKVALUE", arity: 2...2, parameters: [.any], result: FormulaTypes.common,
                        check: FormulaTypes.sameKind, implementation: .special(.blankValue)),
        FormulaFunction(name: "NULLVALUE", arity: 2...2, parameters: [.any], result: FormulaTypes.common,
                        check: FormulaTypes.sameKind, implementation: .special(.blankValue)),
        eager("ISNUMBER", 1...1, [.text], gives: .boolean) { arguments, _ in
            guard case .text(let text) = arguments[0] else { return .boolean(false) }
            // As in the org, spaces or separators make it not a number ("1 000", " 12").
            return .boolean(!text.contains(" ") && FormulaNumber.parse(text) != nil)
        },
        eager("ISPICKVAL", 2...2, [.text], gives: .boolean) { arguments, _ in
            .boolean(arguments[0].text == arguments[1].text)
        },
    ]

    /// A condition's truth: blank is false.
    static func truth(_ value: FormulaValue) -> Bool {
        if case .boolean(let value) = value { return value }
        return false
    }
}
