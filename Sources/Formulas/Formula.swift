import Foundation
import JSON

/// A compiled Salesforce formula (`LOWER(TRIM(Email))`, `IF(Amount > 1000, "Large", "Small")`).
///
/// Compiling checks the syntax, the functions, their argument counts and the types that are known
/// without a record; evaluating reads one record and never crashes: a value that does not fit
/// (`VALUE("abc")`, `DATE(2023, 2, 29)`) is a ``FormulaEvaluationError`` for that record.
public struct Formula: Sendable {
    /// The formula as written.
    public let text: String
    /// The type of its result, `any` when it depends on the record's values.
    public let type: FormulaType
    let root: FormulaNode

    /// Compiles `text`. `fieldTypes` gives the types of fields known before any record is read
    /// (by name, any case) — say, fields an earlier formula set — so more mistakes are found now.
    public init(_ text: String, fieldTypes: [String: FormulaType] = [:]) throws(FormulaSyntaxError) {
        var parser = try FormulaParser(text, fieldTypes: Dictionary(fieldTypes.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 }))
        let parsed = try parser.parse()
        self.text = text
        self.type = parsed.type
        self.root = parsed.node
    }

    /// The formula's value for `record`; `now` is the run's clock (`NOW()`, `TODAY()` in UTC).
    public func evaluate(_ record: JSONObject, now: Date) throws(FormulaEvaluationError) -> FormulaValue {
        try FormulaEvaluator.evaluate(root, FormulaEnvironment(record: record, now: Int64((now.timeIntervalSince1970 * 1000).rounded(.down))))
    }

    /// The formula's value for `record` in a prepared environment (its `record` replaced).
    public func evaluate(in environment: FormulaEnvironment) throws(FormulaEvaluationError) -> FormulaValue {
        try FormulaEvaluator.evaluate(root, environment)
    }

    /// Whether the formula's result is true (blank is false); for conditions (`where`, `reject`).
    public func holds(in environment: FormulaEnvironment) throws(FormulaEvaluationError) -> Bool {
        try FormulaEvaluator.holds(root, environment)
    }
}
