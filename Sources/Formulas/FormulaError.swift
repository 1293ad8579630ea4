/// A formula that cannot be compiled: a syntax error, an unknown function, a wrong number of
/// arguments or a type that does not fit, at a 1-based column of the formula's text.
public struct FormulaSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The 1-based column (in characters) where the problem starts.
    public let column: Int
    /// What is wrong, e.g. `unknown function LOWR`.
    public let message: String

    public init(column: Int, _ message: String) {
        self.column = column
        self.message = message
    }

    /// `column 7: unknown function LOWR`.
    public var description: String { "column \(column): \(message)" }
}

/// A formula that failed for one record: `VALUE("abc")`, a date that does not exist, a division
/// by zero. The record is rejected with this reason; the rest of the records go on.
public struct FormulaEvaluationError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
