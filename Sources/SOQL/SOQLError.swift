/// An error in a SOQL query, shaped as Salesforce reports it in the `message` of a REST error.
///
/// `message` is `"\n<query line>\n<spaces>^\nERROR at Row:R:Column:C\n<detail>"`. Salesforce sometimes
/// shows only a window of a long line; this type always shows the whole line the error is on.
public struct SOQLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The Salesforce `errorCode` of a query error.
    public enum Code: String, Sendable, Hashable {
        case malformedQuery = "MALFORMED_QUERY"
        case invalidField = "INVALID_FIELD"
        case invalidType = "INVALID_TYPE"
    }

    /// The Salesforce error code.
    public let errorCode: Code
    /// The 1-based row of the offending token.
    public let row: Int
    /// The 1-based column of the offending token.
    public let column: Int
    /// The last line of `message`, such as `unexpected token: 'From'`.
    public let detail: String
    /// The full Salesforce-style message, with the query line and a caret under the column.
    public let message: String

    /// An error of any code at `position` in `query`.
    public init(_ errorCode: Code, _ detail: String, at position: SOQLSourcePosition, in query: String) {
        self.errorCode = errorCode
        self.row = position.row
        self.column = position.column
        self.detail = detail
        let lines = query.split(separator: "\n", omittingEmptySubsequences: false)
        var line = position.row >= 1 && position.row <= lines.count ? String(lines[position.row - 1]) : ""
        if line.hasSuffix("\r") { line.removeLast() }
        let caret = String(repeating: " ", count: max(0, position.column - 1)) + "^"
        self.message = "\n\(line)\n\(caret)\nERROR at Row:\(position.row):Column:\(position.column)\n\(detail)"
    }

    /// `INVALID_FIELD` for a field the object does not have, in Salesforce's words.
    public static func noSuchColumn(
        _ field: String, onEntity entity: String, at position: SOQLSourcePosition, in query: String
    ) -> SOQLError {
        SOQLError(
            .invalidField,
            "No such column '\(field)' on entity '\(entity)'. If you are attempting to use a custom field, "
                + "be sure to append the '__c' after the custom field name. Please reference your WSDL or "
                + "the describe call for the appropriate names.",
            at: position, in: query)
    }

    /// `INVALID_TYPE` for an object the org does not have, in Salesforce's words.
    public static func unsupportedObjectType(
        _ objectType: String, at position: SOQLSourcePosition, in query: String
    ) -> SOQLError {
        SOQLError(
            .invalidType,
            "sObject type '\(objectType)' is not supported. If you are attempting to use a custom object, "
                + "be sure to append the '__c' after the entity name. Please reference your WSDL or the "
                + "describe call for the appropriate names.",
            at: position, in: query)
    }

    public var description: String { "\(errorCode.rawValue): \(message)" }
}
