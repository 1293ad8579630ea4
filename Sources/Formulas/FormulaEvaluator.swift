import JSON

/// Walks a compiled formula over one record.
enum FormulaEvaluator {
    static func evaluate(_ node: FormulaNode, _ environment: FormulaEnvironment) throws(FormulaEvaluationError) -> FormulaValue {
        switch node {
        case .literal(let value):
            return value
        case .field(let name, let parts):
            return try field(name, parts, in: environment.record)
        case .negate(let operand):
            let value = try evaluate(operand, environment).converted(to: .number)
            guard case .number(let number) = value else { return .blank }
            return .number(-number)
        case .not(let operand):
            return .boolean(!(try holds(operand, environment)))
        case .binary(let op, let left, let right, let textual):
            switch op {
            case .and:
                guard try holds(left, environment) else { return .boolean(false) }
                return .boolean(try holds(right, environment))
            case .or:
                if try holds(left, environment) { return .boolean(true) }
                return .boolean(try holds(right, environment))
            default:
                return try FormulaOperations.apply(op, try evaluate(left, environment), try evaluate(right, environment), textual: textual)
            }
        case .call(let function, let arguments):
            switch function.implementation {
            case .special(let special):
                return try evaluate(special, arguments, environment)
            case .eager(let body):
                var values = FormulaArguments()
                for (index, argument) in arguments.enumerated() {
                    let value = try evaluate(argument, environment)
                    do throws(FormulaEvaluationError) {
                        values.append(try value.converted(to: function.parameter(index)))
                    } catch {
                        throw FormulaEvaluationError("\(function.name): \(error.message)")
                    }
                }
                do {
                    return try body(values, environment)
                } catch let error as FormulaEvaluationError {
                    throw error
                } catch {
                    throw FormulaEvaluationError("\(function.name): \(error)")
                }
            }
        case .regex(let textNode, let regex):
            return .boolean(regex.matches(try evaluate(textNode, environment).text))
        }
    }

    /// Whether a condition holds: its value as a boolean, blank being false.
    static func holds(_ node: FormulaNode, _ environment: FormulaEnvironment) throws(FormulaEvaluationError) -> Bool {
        FormulaFunction.truth(try evaluate(node, environment).converted(to: .boolean))
    }

    private static func evaluate(_ special: FormulaFunction.Special, _ arguments: [FormulaNode], _ environment: FormulaEnvironment) throws(FormulaEvaluationError) -> FormulaValue {
        switch special {
        case .if:
            return try evaluate(arguments[try holds(arguments[0], environment) ? 1 : 2], environment)
        case .case:
            let subject = try evaluate(arguments[0], environment)
            var index = 1
            while index + 1 < arguments.count {
                if try FormulaOperations.equal(subject, try evaluate(arguments[index], environment)) == true {
                    return try evaluate(arguments[index + 1], environment)
                }
                index += 2
            }
            return try evaluate(arguments[arguments.count - 1], environment)
        case .and:
            for argument in arguments where !(try holds(argument, environment)) {
                return .boolean(false)
            }
            return .boolean(true)
        case .or:
            for argument in arguments where try holds(argument, environment) {
                return .boolean(true)
            }
            return .boolean(false)
        case .blankValue:
            let value = try evaluate(arguments[0], environment)
            return value.isBlank ? try evaluate(arguments[1], environment) : value
        case .isBlank:
            return .boolean(try evaluate(arguments[0], environment).isBlank)
        }
    }

    /// A field's value: the key as written (any case), else the path through nested objects
    /// (`Account.Name`). A missing field is blank.
    static func field(_ name: String, _ parts: [String], in record: JSONObject) throws(FormulaEvaluationError) -> FormulaValue {
        func value(_ json: JSONValue) throws(FormulaEvaluationError) -> FormulaValue {
            do throws(FormulaEvaluationError) { return try FormulaValue(json) } catch { throw FormulaEvaluationError("\(name) \(error.message)") }
        }
        if let json = lookup(name, in: record) { return try value(json) }
        guard parts.count > 1 else { return .blank }
        var object = record
        for part in parts.dropLast() {
            guard case .object(let nested)? = lookup(part, in: object) else { return .blank }
            object = nested
        }
        return try lookup(parts[parts.count - 1], in: object).map(value) ?? .blank
    }

    /// `record[name]`, else the first key equal to it ignoring case (field names are case-insensitive).
    static func lookup(_ name: String, in record: JSONObject) -> JSONValue? {
        if let value = record[name] { return value }
        for (key, value) in record where key.utf8.count == name.utf8.count && equalIgnoringCase(key, name) { return value }
        return nil
    }

    private static func equalIgnoringCase(_ first: String, _ second: String) -> Bool {
        var ascii = true
        for (a, b) in zip(first.utf8, second.utf8) {
            if a >= 0x80 || b >= 0x80 { ascii = false; break }
            if a != b, (a | 0x20) != (b | 0x20) || !((a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) { return false }
        }
        return ascii || first.lowercased() == second.lowercased()
    }
}
