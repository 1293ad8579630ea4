import JSON

/// A function formulas may call: its name, how many arguments it takes and of which types, the
/// type it gives, and what it does.
struct FormulaFunction: Sendable {
    /// Throws only ``FormulaEvaluationError``s (closures do not infer typed throws).
    typealias Body = @Sendable (FormulaArguments, FormulaEnvironment) throws -> FormulaValue

    /// Functions that evaluate only some of their arguments, done by the evaluator itself.
    enum Special: Sendable {
        case `if`, `case`, and, or, blankValue, isBlank
    }

    enum Implementation: Sendable {
        /// Arguments are evaluated and converted to the parameter types first.
        case eager(Body)
        case special(Special)
    }

    let name: String
    let arity: ClosedRange<Int>
    /// The type of each parameter; the last one repeats. `any` takes every type (see `check`).
    let parameters: [FormulaType]
    let result: @Sendable ([FormulaType]) -> FormulaType
    /// Further checks of the argument types; returns the problem.
    var check: (@Sendable ([FormulaType]) -> String?)? = nil
    let implementation: Implementation

    func parameter(_ index: Int) -> FormulaType {
        parameters.isEmpty ? .any : parameters[min(index, parameters.count - 1)]
    }

    /// Every function, by upper-case name.
    static let all: [String: FormulaFunction] = {
        var table: [String: FormulaFunction] = [:]
        for function in logical + text + math + dates { table[function.name] = function }
        return table
    }()

    static func named(_ name: String) -> FormulaFunction? { all[name] }

    /// Functions of the org's user interface, which mean nothing to records in a pipeline.
    static let unavailable: Set<String> = [
        "HYPERLINK", "IMAGE", "GETRECORDIDS", "REQUIRESCRIPT", "LINKTO", "URLFOR", "INCLUDE", "GETSESSIONID",
        "PRIORVALUE", "ISCHANGED", "ISNEW", "ISCLONE", "VLOOKUP", "PREDICT", "CURRENCYRATE", "JUNCTIONIDLIST",
    ]

    // MARK: Building the table

    static func eager(_ name: String, _ arity: ClosedRange<Int>, _ parameters: [FormulaType], gives result: FormulaType,
                      check: (@Sendable ([FormulaType]) -> String?)? = nil, _ body: @escaping Body) -> FormulaFunction {
        FormulaFunction(name: name, arity: arity, parameters: parameters, result: { _ in result }, check: check, implementation: .eager(body))
    }

    /// A check that an `any` parameter gets one of `types`.
    static func accepts(_ types: Set<FormulaType>, at index: Int = 0) -> @Sendable ([FormulaType]) -> String? {
        { arguments in
            let type = arguments[index]
            guard type != .any, !types.contains(type) else { return nil }
            return "argument \(index + 1) must be \(types.map(\.description).sorted().joined(separator: " or ")), not \(type)"
        }
    }
}

/// What a formula sees while it runs: the record and the run's clock.
public struct FormulaEnvironment: Sendable {
    public var record: JSONObject
    /// Milliseconds since 1970-01-01T00:00:00Z: `NOW()`; `TODAY()` is its date in UTC.
    public var now: Int64

    public init(record: JSONObject, now: Int64) {
        self.record = record
        self.now = now
    }
}
