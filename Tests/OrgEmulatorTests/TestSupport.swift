import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import OrgEmulator
import OrgEmulatorTesting
import Testing

/// The API version the tests speak, and the REST base path for it.
let apiVersion = "62.0"
let api = "/services/data/v62.0"

/// A test harness failure (not an assertion about the emulator).
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One HTTP answer: status, headers (names lower-cased) and body.
struct Reply: Sendable {
    var status: Int
    var headers: [String: String]
    var data: Data

    /// The body parsed as JSON; `.null` for an empty or non-JSON body.
    var json: JSONValue { (try? JSONParser.parse(data).value) ?? .null }
    var text: String { String(decoding: data, as: UTF8.self) }

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// How a request authenticates.
enum Auth: Sendable {
    /// No `Authorization` header.
    case none
    /// `Authorization: Bearer <the emulator's token>`.
    case bearer
    /// `Authorization: Bearer <token>`.
    case token(String)
    /// `Authorization: <value>` verbatim.
    case header(String)
}

/// A ``TestOrg`` (in-memory database unless a path is given) talked to over real HTTP with
/// URLSession — not our client. Start with ``withEmulator(databasePath:seedPath:_:)``.
final class EmulatorHarness: @unchecked Sendable {
    let org: TestOrg
    let session: URLSession

    var emulator: OrgEmulator { org.emulator }
    /// `http://127.0.0.1:PORT`, as `onRunning` reported it.
    var instanceURL: String { org.instanceURL }
    /// The development token the emulator accepts from the start.
    var token: String { org.accessToken }

    private init(org: TestOrg) {
        self.org = org
        session = Self.makeSession()
    }

    /// A session of its own (no shared connection pool).
    static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        configuration.timeoutIntervalForResource = 120
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    /// Starts an emulator on port 0 and waits until `onRunning` reports its instance URL.
    static func start(seedPath: String = SampleOrg.seedPath, databasePath: String? = nil,
                      requestDeadlineSeconds: Double = 30) async throws -> EmulatorHarness {
        EmulatorHarness(org: try await TestOrg.start(seedPath: seedPath, databasePath: databasePath,
                                                     requestDeadlineSeconds: requestDeadlineSeconds))
    }

    /// Stops the server and waits until its port is closed.
    func stop() async {
        session.finishTasksAndInvalidate()
        await org.stop()
    }

    // MARK: Requests

    /// Sends a request to `path` (absolute URL or a path on the instance).
    func send(_ method: String, _ path: String, json: JSONValue? = nil, body: Data? = nil, contentType: String? = nil,
              headers: [String: String] = [:], auth: Auth = .bearer, session: URLSession? = nil) async throws -> Reply {
        guard let url = URL(string: path.hasPrefix("http") ? path : instanceURL + path) else { throw HarnessError("bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        switch auth {
        case .none: break
        case .bearer: request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        case .token(let token): request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        case .header(let value): request.setValue(value, forHTTPHeaderField: "Authorization")
        }
        if let json {
            request.httpBody = Data(json.jsonString.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
        }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await (session ?? self.session).data(for: request)
        guard let http = response as? HTTPURLResponse else { throw HarnessError("not an HTTP response") }
        var replyHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields { replyHeaders["\(name)".lowercased()] = "\(value)" }
        return Reply(status: http.statusCode, headers: replyHeaders, data: data)
    }

    /// Sends a REST request under `/services/data/v62.0` (`path` starts with `/`).
    func rest(_ method: String, _ path: String, json: JSONValue? = nil, headers: [String: String] = [:], auth: Auth = .bearer,
              session: URLSession? = nil) async throws -> Reply {
        try await send(method, api + path, json: json, headers: headers, auth: auth, session: session)
    }

    /// `POST /services/oauth2/token` with a form body.
    func oauthToken(_ form: [(String, String)], headers: [String: String] = [:]) async throws -> Reply {
        try await send("POST", "/services/oauth2/token", body: Data(formEncode(form).utf8),
                       contentType: "application/x-www-form-urlencoded", headers: headers, auth: .none)
    }

    // MARK: Conveniences

    /// Creates a record and returns its id, requiring a 201.
    func create(_ type: String, _ fields: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await rest("POST", "/sobjects/\(type)", json: fields)
        try #require(reply.status == 201, "create \(type): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return try #require(reply.json["id"]?.stringValue, sourceLocation: sourceLocation)
    }

    /// A record by id, requiring a 200.
    func record(_ type: String, _ id: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        let reply = try await rest("GET", "/sobjects/\(type)/\(id)")
        try #require(reply.status == 200, "get \(type)/\(id): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return reply.json
    }

    /// The id of the live record whose `field` is `value` (GET by external id / idLookup field).
    func id(_ type: String, _ field: String, _ value: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await rest("GET", "/sobjects/\(type)/\(field)/\(value)")
        try #require(reply.status == 200, "get \(type) by \(field)=\(value): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return try #require(reply.json["Id"]?.stringValue, sourceLocation: sourceLocation)
    }

    /// The ids of the live records of a type, from the `updated` change feed.
    func liveIds(_ type: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let reply = try await rest("GET", "/sobjects/\(type)/updated/?start=2000-01-01T00:00:00Z&end=2199-12-31T00:00:00Z")
        try #require(reply.status == 200, "updated \(type): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return (reply.json["ids"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// `GET /emulator/stats`.
    func stats(sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        let reply = try await send("GET", "/emulator/stats", auth: .none)
        try #require(reply.status == 200, "stats: \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return reply.json
    }

    /// The live record count of a type in `/emulator/stats` (0 when absent).
    func count(_ type: String) async throws -> Int {
        Int(try await stats()["records"]?[type]?.integerValue ?? 0)
    }

    /// Every live record count in `/emulator/stats`.
    func counts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (name, value) in try await stats()["records"]?.objectValue ?? JSONObject() { counts[name] = Int(value.integerValue ?? 0) }
        return counts.filter { $0.value > 0 }
    }

    /// `POST /emulator/clock {"advanceSeconds": N}`; returns the emulator's new "now".
    @discardableResult
    func advanceClock(_ seconds: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await send("POST", "/emulator/clock", json: ["advanceSeconds": .integer(Int64(seconds))], auth: .none)
        try #require(reply.status == 200, "clock: \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return try #require(reply.json["now"]?.stringValue, sourceLocation: sourceLocation)
    }

    /// `POST /emulator/faults`.
    @discardableResult
    func setFaults(_ faults: JSONValue) async throws -> Reply {
        try await send("POST", "/emulator/faults", json: faults, auth: .none)
    }
}

/// Runs `body` against a fresh emulator and stops it afterwards.
func withEmulator<T>(databasePath: String? = nil, seedPath: String = SampleOrg.seedPath, requestDeadlineSeconds: Double = 30,
                     _ body: (EmulatorHarness) async throws -> T) async throws -> T {
    let harness = try await EmulatorHarness.start(seedPath: seedPath, databasePath: databasePath,
                                                  requestDeadlineSeconds: requestDeadlineSeconds)
    do {
        let value = try await body(harness)
        await harness.stop()
        return value
    } catch {
        await harness.stop()
        throw error
    }
}

/// `application/x-www-form-urlencoded` text.
func formEncode(_ form: [(String, String)]) -> String {
    var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
    allowed.insert(charactersIn: "-._~")
    return form.map { key, value in
        "\(key.addingPercentEncoding(withAllowedCharacters: allowed)!)=\(value.addingPercentEncoding(withAllowedCharacters: allowed)!)"
    }.joined(separator: "&")
}

/// A REST error body: `[{"message", "errorCode"[, "fields"]}]`.
func restError(_ code: String, _ message: String, fields: [String]? = nil) -> JSONValue {
    var object = JSONObject()
    object["message"] = .string(message)
    object["errorCode"] = .string(code)
    if let fields { object["fields"] = .array(fields.map(JSONValue.string)) }
    return .array([.object(object)])
}

/// A per-record error of Collections / Tree results (`statusCode` key).
func recordError(_ code: String, _ message: String, fields: [String] = []) -> JSONValue {
    ["statusCode": .string(code), "message": .string(message), "fields": .array(fields.map(JSONValue.string))]
}

/// Checks a REST error answer: status, a one-element JSON array, and its `errorCode`.
func expectError(_ reply: Reply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(reply.status == status, "status \(reply.status), body \(reply.text)", sourceLocation: sourceLocation)
    let errors = reply.json.arrayValue ?? []
    #expect(errors.count == 1, "expected a JSON array with one error: \(reply.text)", sourceLocation: sourceLocation)
    #expect(errors.first?["errorCode"]?.stringValue == code, "body \(reply.text)", sourceLocation: sourceLocation)
}

/// The keys of a JSON object, in order.
func keys(_ value: JSONValue?) -> [String] {
    value?.objectValue?.keys ?? []
}

// MARK: Salesforce ids, computed independently of the emulator

private let checksumAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")

/// The 3-character checksum of a 15-character id.
func idChecksum(_ fifteen: String) -> String {
    let characters = Array(fifteen)
    var suffix = ""
    for chunk in 0..<3 {
        var bits = 0
        for position in 0..<5 {
            let character = characters[chunk * 5 + position]
            if character.isASCII && character.isUppercase { bits |= 1 << position }
        }
        suffix.append(checksumAlphabet[bits])
    }
    return suffix
}

/// `true` for an 18-character id whose checksum matches its first 15 characters.
func hasValidChecksum(_ id: String) -> Bool {
    id.count == 18 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } && idChecksum(String(id.prefix(15))) == String(id.suffix(3))
}

/// A well-formed 18-character id that no record has.
func unusedId(prefix: String) -> String {
    let fifteen = prefix + "0ZZZZZZZZZZZZ".prefix(12)
    return fifteen + idChecksum(String(fifteen))
}

/// `YYYY-MM-DDTHH:MM:SS.000+0000`.
func isSalesforceTimestamp(_ text: String?) -> Bool {
    guard let text else { return false }
    return text.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000\+0000$"#, options: .regularExpression) != nil
}

/// A temporary directory removed by the caller.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("org-emulator-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
