/// SOQL: the query language of Salesforce orgs.
///
/// This module holds the SOQL parser, AST, printer and evaluator shared by the org client and the
/// org emulator. It has no dependencies, so it can be fuzzed on its own.
public enum SOQL {
    /// Quotes a value as a SOQL string literal, escaping backslashes, quotes and control characters.
    public static func quote(_ value: String) -> String {
        var output = "'"
        for character in value {
            switch character {
            case "\\": output += "\\\\"
            case "'": output += "\\'"
            case "\"": output += "\\\""
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default: output.append(character)
            }
        }
        return output + "'"
    }
}
