import JSON

/// An error the org reported for a request: its HTTP status and first error entry.
public struct OrgAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var errorCode: String
    public var message: String
    public var fields: [String]
    /// Every error entry of the body, as sent.
    public var body: JSONValue

    public init(status: Int, errorCode: String, message: String, fields: [String] = [], body: JSONValue = .null) {
        self.status = status
        self.errorCode = errorCode
        self.message = message
        self.fields = fields
        self.body = body
    }

    /// Reads Salesforce's error array (`[{"errorCode", "message", "fields"}]`) or OAuth's error object.
    public init(status: Int, body: JSONValue, fallback: String) {
        let first = body[0] ?? body
        self.init(
            status: status,
            errorCode: first["errorCode"]?.stringValue ?? first["statusCode"]?.stringValue ?? first["error"]?.stringValue ?? "HTTP_\(status)",
            message: first["message"]?.stringValue ?? first["error_description"]?.stringValue ?? fallback,
            fields: first["fields"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            body: body)
    }

    public var description: String { "\(errorCode): \(message)" + (fields.isEmpty ? "" : " (fields: \(fields.joined(separator: ", ")))") }
}

/// Why the client could not get an answer from the org.
public enum OrgClientError: Error, Sendable, CustomStringConvertible {
    /// The org refused the credentials (`invalid_grant`, …); never includes a secret.
    case authenticationFailed(String)
    /// The org's daily API request limit ran out: the run must stop.
    case requestLimitExceeded(String)
    /// Settings that cannot work (an http URL to a non-loopback host, a missing key file, …).
    case invalidConfiguration(String)
    /// The answer could not be understood.
    case invalidResponse(String)
    /// No success after every retry: the last problem, and whether an attempt's answer was lost
    /// after it was sent (an idempotent write, which the org may then have applied).
    case gaveUp(attempts: Int, last: String, answerLost: Bool)
    /// A request that is not safe to repeat (a create) lost its connection after it was sent: the
    /// org may or may not have applied it.
    case uncertain(String)

    public var description: String {
        switch self {
        case .authenticationFailed(let message): return "authentication failed: \(message)"
        case .requestLimitExceeded(let message): return "the org's daily API request limit is exhausted (\(message)); stopping"
        case .invalidConfiguration(let message): return message
        case .invalidResponse(let message): return message
        case .gaveUp(let attempts, let last, _): return "no answer from the org after \(attempts) attempts: \(last)"
        case .uncertain(let message): return "the outcome is unknown: \(message)"
        }
    }
}
