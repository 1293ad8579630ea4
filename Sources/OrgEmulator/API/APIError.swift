import JSON

/// An error as the REST API reports it: an HTTP status and `[{"message", "errorCode", "fields"}]`.
struct APIError: Error, Sendable {
    var status: Int
    var errorCode: String
    var message: String
    /// `nil` for query and auth errors, which carry no `fields` key.
    var fields: [String]?

    init(_ status: Int, _ errorCode: String, _ message: String, fields: [String]? = nil) {
        self.status = status
        self.errorCode = errorCode
        self.message = message
        self.fields = fields
    }

    /// The REST error object (`errorCode` key).
    var restError: JSONValue {
        var object = JSONObject()
        object["message"] = .string(message)
        object["errorCode"] = .string(errorCode)
        if let fields { object["fields"] = .array(fields.map(JSONValue.string)) }
        return .object(object)
    }

    /// The per-record error object of Collections and Tree results (`statusCode` key).
    var recordError: JSONValue {
        ["statusCode": .string(errorCode), "message": .string(message), "fields": .array((fields ?? []).map(JSONValue.string))]
    }

    static let notFound = APIError(404, "NOT_FOUND", "The requested resource does not exist")

    static func malformedId(_ object: String, _ id: String, field: String = "Id") -> APIError {
        APIError(400, "MALFORMED_ID", "\(object) ID: id value of incorrect type: \(id)", fields: [field])
    }

    static func invalidField(_ message: String, fields: [String] = []) -> APIError {
        APIError(400, "INVALID_FIELD", message, fields: fields)
    }

    static func badJSON(_ message: String) -> APIError {
        APIError(400, "JSON_PARSER_ERROR", message)
    }

    /// `error` as the API reports it: an `APIError` as it is; anything else (a database error)
    /// as 500 UNKNOWN_EXCEPTION, as an org reports a failure of its own. The one place that wraps.
    static func unexpected(_ error: any Error) -> APIError {
        error as? APIError ?? APIError.unexpected(error)
    }

    static let entityIsDeleted = APIError(404, "ENTITY_IS_DELETED", "entity is deleted", fields: [])
}
