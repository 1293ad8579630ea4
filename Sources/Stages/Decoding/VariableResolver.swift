import JSON

/// Substitutes `${VAR}` in every string value of a pipeline file; `$${` stands for a literal `${`.
public struct VariableResolver: Sendable {
    /// The variables in force: the environment, overridden by `--var-file`, overridden by `--var`.
    public var variables: [String: String]

    public init(variables: [String: String]) {
        self.variables = variables
    }

    /// The names of unset variables (and unterminated references) met while resolving, with the
    /// JSON path of each.
    public struct Unset: Sendable, Equatable {
        public var name: String
        public var path: String
        /// `${NAME` with no closing brace.
        public var unterminated = false
    }

    /// Resolves every string in `value`; `path` is the JSON path of `value` (empty for the root).
    public func resolve(_ value: JSONValue, path: String = "", unset: inout [Unset], used: inout [String: String]) -> JSONValue {
        switch value {
        case .string(let string):
            return .string(resolve(string, path: path, unset: &unset, used: &used))
        case .array(let array):
            return .array(array.enumerated().map { offset, element in
                resolve(element, path: "\(path)[\(offset)]", unset: &unset, used: &used)
            })
        case .object(let object):
            var resolved = JSONObject()
            for (key, member) in object {
                resolved[key] = resolve(member, path: path.isEmpty ? key : "\(path).\(key)", unset: &unset, used: &used)
            }
            return .object(resolved)
        default:
            return value
        }
    }

    /// Resolves one string.
    public func resolve(_ string: String, path: String, unset: inout [Unset], used: inout [String: String]) -> String {
        guard string.contains("$") else { return string }
        var output = ""
        let characters = Array(string)
        var index = 0
        while index < characters.count {
            if characters[index] == "$", index + 2 < characters.count, characters[index + 1] == "$", characters[index + 2] == "{" {
                output += "${"
                index += 3
                continue
            }
            if characters[index] == "$", index + 1 < characters.count, characters[index + 1] == "{",
               let close = characters[(index + 2)...].firstIndex(of: "}") {
                let name = String(characters[(index + 2)..<close])
                if let value = variables[name] {
                    output += value
                    used[name] = value
                } else {
                    unset.append(Unset(name: name, path: path))
                }
                index = close + 1
                continue
            }
            if characters[index] == "$", index + 1 < characters.count, characters[index + 1] == "{" {
                unset.append(Unset(name: String(characters[(index + 2)...].prefix(40)), path: path, unterminated: true))
                output += String(characters[index...])
                break
            }
            output.append(characters[index])
            index += 1
        }
        return output
    }

    /// `true` when `string` is exactly one `${VAR}` reference (how secrets must be written).
    public static func isSingleReference(_ string: String) -> Bool {
        guard string.hasPrefix("${"), string.hasSuffix("}"), string.count > 3 else { return false }
        let name = string.dropFirst(2).dropLast()
        return !name.contains("}") && !name.contains("$") && !name.contains("{")
    }
}
