import Foundation
import JSON

/// An HTTP request as the emulator's API layer sees it, independent of the HTTP server.
struct EmulatorRequest: Sendable {
    var method: String
    /// The path without query string, e.g. `/services/data/v62.0/sobjects/Account/`.
    var path: String
    var query: [String: String]
    /// Header names lower-cased.
    var headers: [String: String]
    var body: Data
    /// When the request reached the server: its deadline runs from here, not from when the
    /// engine got round to it.
    var arrival = ContinuousClock.now
    /// The body already parsed (a Composite subrequest's, or a request read once to classify it).
    var json: JSONValue?

    /// The body parsed as JSON; a JSON_PARSER_ERROR otherwise.
    func jsonBody() throws(APIError) -> JSONValue {
        if let json { return json }
        guard !body.isEmpty else { throw APIError.badJSON("No content to map due to end-of-input") }
        do {
            return try JSONParser.parse(body).value
        } catch {
            throw APIError.badJSON("Unexpected character at [line:\(error.line), column:\(error.column)]: \(error.message)")
        }
    }
}

/// An HTTP response from the API layer.
struct EmulatorResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    /// A JSON body, kept as a value until it is sent: a Composite subresponse goes into its
    /// parent's answer without being written and read back.
    private var json: JSONValue?
    private var bytes: Data?
    /// Close the connection without answering (the change, if any, is committed).
    var drop = false

    init(status: Int, headers: [(String, String)] = [], body: Data? = nil) {
        self.status = status
        self.headers = headers
        self.bytes = body
    }

    /// The body as sent.
    var body: Data? {
        get {
            bytes ?? json.map { value in
                // Written straight to bytes: no String to build and validate.
                var text: [UInt8] = []
                value.write(into: &text)
                return Data(text)
            }
        }
        set {
            bytes = newValue
            json = nil
        }
    }

    static func json(_ status: Int, _ value: JSONValue, headers: [(String, String)] = []) -> EmulatorResponse {
        var response = EmulatorResponse(status: status, headers: [("Content-Type", "application/json;charset=UTF-8")] + headers)
        response.json = value
        return response
    }

    static func noContent() -> EmulatorResponse { EmulatorResponse(status: 204) }

    static func error(_ error: APIError) -> EmulatorResponse {
        if error.status == 300 {
            // Several records match an external id: the body lists their URLs.
            return json(300, .array(error.message.split(separator: ",").map { .string(String($0)) }))
        }
        var headers: [(String, String)] = []
        if error.status == 401 { headers.append(("WWW-Authenticate", "Token")) }
        return json(error.status, .array([error.restError]), headers: headers)
    }

    static func text(_ status: Int, _ text: String, contentType: String) -> EmulatorResponse {
        EmulatorResponse(status: status, headers: [("Content-Type", contentType)], body: Data(text.utf8))
    }

    /// The body as JSON, for composite subresponses.
    var jsonBody: JSONValue {
        if let json { return json }
        guard let body = bytes, !body.isEmpty, let value = try? JSONParser.parse(body).value else { return .null }
        return value
    }
}
