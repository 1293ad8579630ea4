import Foundation

extension FormulaFunction {
    /// ROUND FLOOR CEILING TRUNC ABS SQRT MAX MIN MOD.
    static let math: [FormulaFunction] = [
        eager("ROUND", 2...2, [.number], gives: .number) { arguments, _ in
            try numbers(arguments) { values throws(FormulaEvaluationError) in try round(values[0], digits: values[1], "ROUND", .plain) }
        },
        eager("TRUNC", 1...2, [.number], gives: .number) { arguments, _ in
            try numbers(arguments) { values throws(FormulaEvaluationError) in
                try round(values[0], digits: values.count > 1 ? values[1] : 0, "TRUNC", values[0] < 0 ? .up : .down)
            }
        },
        // As in the org, both work on the magnitude: FLOOR(-2.5) is -2, CEILING(-2.5) is -3.
        eager("FLOOR", 1...1, [.number], gives: .number) { arguments, _ in try numbers(arguments) { $0[0].rounded(.towardZero) } },
        eager("CEILING", 1...1, [.number], gives: .number) { arguments, _ in try numbers(arguments) { $0[0].rounded(.awayFromZero) } },
        eager("ABS", 1...1, [.number], gives: .number) { arguments, _ in try numbers(arguments) { abs($0[0]) } },
        eager("SQRT", 1...1, [.number], gives: .number) { arguments, _ in
            try numbers(arguments) { values throws(FormulaEvaluationError) in
                guard values[0] >= 0 else { throw FormulaEvaluationError("SQRT: \(FormulaNumber.format(values[0])) is negative") }
                return values[0].squareRoot()
            }
        },
        eager("MAX", 1...Int.max, [.number], gives: .number) { arguments, _ in try numbers(arguments) { $0.max()! } },
        eager("MIN", 1...Int.max, [.number], gives: .number) { arguments, _ in try numbers(arguments) { $0.min()! } },
        eager("MOD", 2...2, [.number], gives: .number) { arguments, _ in
            try numbers(arguments) { values throws(FormulaEvaluationError) in
                guard values[1] != 0 else { throw FormulaEvaluationError("MOD: division by zero") }
                return values[0].truncatingRemainder(dividingBy: values[1])
            }
        },
    ]

    /// Applies `body` to the arguments' numbers; a blank argument gives blank, and a result that
    /// is not a finite number is an error.
    static func numbers(_ arguments: FormulaArguments, _ body: ([Double]) throws(FormulaEvaluationError) -> Double) throws(FormulaEvaluationError) -> FormulaValue {
        var values: [Double] = []
        values.reserveCapacity(arguments.count)
        for argument in arguments {
            guard case .number(let value) = argument else { return .blank }
            values.append(value)
        }
        return try FormulaOperations.finite(try body(values))
    }

    /// Rounds to `digits` decimal places (negative: to tens, hundreds…), in decimal: a number's
    /// shortest decimal form is rounded, so `ROUND(2.675, 2)` is 2.68 as written, not 2.67 as stored.
    static func round(_ value: Double, digits: Double, _ function: String, _ mode: NSDecimalNumber.RoundingMode) throws(FormulaEvaluationError) -> Double {
        guard abs(digits) <= 18 else { throw FormulaEvaluationError("\(function): \(FormulaNumber.format(digits)) digits is out of range") }
        guard var decimal = Decimal(string: FormulaNumber.format(value), locale: Locale(identifier: "en_US_POSIX")) else { return value }
        var rounded = Decimal()
        NSDecimalRound(&rounded, &decimal, Int(digits), mode)
        return Double(rounded.description) ?? value
    }
}
