/// SOQL: the query language of Salesforce orgs.
///
/// This module holds the SOQL parser, AST, printer and evaluator shared by the org client, the org
/// emulator and the `markDirty` stage. It depends only on `JSON`, so it can be fuzzed on its own.
public enum SOQL {
    /// Parses a `SELECT` statement; errors are `MALFORMED_QUERY` with Salesforce's message shape.
    public static func parseQuery(_ text: String) throws(SOQLError) -> SOQLQuery {
        try SOQLParser.parseQuery(text)
    }

    /// Parses a bare WHERE condition (`Name LIKE 'A%' AND Id IN ('001…')`), as `markDirty`'s `where` and
    /// Mobile Sync's `parentSoqlFilter` hold; error rows and columns are within `text`.
    public static func parseCondition(_ text: String) throws(SOQLError) -> SOQLCondition {
        try SOQLParser.parseCondition(text)
    }

    /// Quotes a value as a SOQL string literal, escaping backslashes, quotes and control characters.
    ///
    /// Works on Unicode scalars, so a quote followed by a combining mark is still escaped.
    public static func quote(_ value: String) -> String {
        var output = "'"
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": output += "\\\\"
            case "'": output += "\\'"
            case "\"": output += "\\\""
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "'"
    }
}
