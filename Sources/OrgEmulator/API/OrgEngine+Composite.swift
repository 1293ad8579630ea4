import Foundation
import GRDB
import JSON

/// Composite (`/composite`): up to 25 subrequests in order, `@{ref.path}` references to earlier
/// results, and `allOrNone` rolling everything back with PROCESSING_HALTED.
extension OrgEngine {
    static let compositeLimit = 25
    static let heavySubrequestLimit = 5

    func composite(_ request: EmulatorRequest, version: String, in outer: Database?) throws(APIError) -> EmulatorResponse {
        let body = try request.jsonBody()
        guard let subrequests = body["compositeRequest"]?.arrayValue else {
            throw APIError.badJSON("'compositeRequest' is a required field.")
        }
        guard subrequests.count <= Self.compositeLimit else {
            throw APIError(400, "LIMIT_EXCEEDED", "Composite request can't have more than \(Self.compositeLimit) subrequests; it has \(subrequests.count).")
        }
        // Of the 25, at most 5 may be sObject Collections or query calls, as in an org.
        let heavy = subrequests.filter { subrequest in
            let parts = Self.components(Self.splitURL(subrequest["url"]?.stringValue ?? "").0)
            let kind = Self.restRoute(subrequest["method"]?.stringValue ?? "GET", path: parts)?.route.kind
            return kind == .query || kind == .collections
        }.count
        guard heavy <= Self.heavySubrequestLimit else {
            throw APIError(400, "LIMIT_EXCEEDED",
                           "Composite request can't have more than \(Self.heavySubrequestLimit) sObject Collections or query subrequests; it has \(heavy).")
        }
        let allOrNone = body["allOrNone"]?.boolValue ?? false
        try validateSubrequests(subrequests)
        let (responses, _) = try runSubrequests(subrequests, allOrNone: allOrNone, in: outer)
        return .json(200, ["compositeResponse": .array(responses.map(JSONValue.object))])
    }

    /// Checks reference ids, methods and URLs before anything runs (a bad one fails the request).
    func validateSubrequests(_ subrequests: [JSONValue]) throws(APIError) {
        var referenceIds = Set<String>()
        for (offset, subrequest) in subrequests.enumerated() {
            guard let referenceId = subrequest["referenceId"]?.stringValue, Self.isReferenceId(referenceId) else {
                throw APIError.badJSON("'referenceId' is a required field and must start with a letter or a number and contain only letters, numbers and underscores (subrequest \(offset)).")
            }
            guard referenceIds.insert(referenceId).inserted else {
                throw APIError(400, "INVALID_INPUT", "Duplicate referenceId: \(referenceId)")
            }
            guard let method = subrequest["method"]?.stringValue, ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) else {
                throw APIError.badJSON("'method' must be one of GET, POST, PUT, PATCH, DELETE (subrequest \(referenceId)).")
            }
            guard (subrequest["url"]?.stringValue ?? "").hasPrefix("/services/data/v") else {
                throw APIError(400, "INVALID_URL", "The url of subrequest \(referenceId) must start with /services/data/vXX.X/")
            }
        }
    }

    /// A letter or digit, then letters, digits and underscores (ASCII), as an org requires.
    static func isReferenceId(_ text: String) -> Bool {
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard let first = text.utf8.first, isAlphanumeric(first) else { return false }
        return text.utf8.dropFirst().allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    /// Runs subrequests in order in one transaction. With `allOrNone`, the first failure rolls
    /// everything back and every other subrequest reports PROCESSING_HALTED.
    /// - Returns: the composite responses, and whether any subrequest failed.
    func runSubrequests(_ subrequests: [JSONValue], allOrNone: Bool, in outer: Database?) throws(APIError) -> ([JSONObject], Bool) {
        var responses: [JSONObject] = []
        var failed = false
        do {
            try exclusiveWrite(in: outer) { db in
                var results: [String: JSONValue] = [:]
                for subrequest in subrequests {
                    let referenceId = subrequest["referenceId"]!.stringValue!
                    var response: EmulatorResponse
                    do {
                        response = try runSubrequest(subrequest, results: results, in: db)
                    } catch let error as APIError {
                        response = .error(error)
                    }
                    if response.status >= 400 { failed = true }
                    if response.status < 300 { results[referenceId] = response.jsonBody }
                    var entry = JSONObject()
                    entry["body"] = response.jsonBody
                    var headers = JSONObject()
                    for (name, value) in response.headers where name == "Location" { headers[name] = .string(value) }
                    entry["httpHeaders"] = .object(headers)
                    entry["httpStatusCode"] = .integer(Int64(response.status))
                    entry["referenceId"] = .string(referenceId)
                    responses.append(entry)
                    if allOrNone && failed { break }
                }
                if allOrNone && failed { throw TransactionAbort(error: APIError(400, "PROCESSING_HALTED", "rolled back")) }
            }
        } catch let error as APIError {
            throw error
        } catch is TransactionAbort {
            let halted = APIError(400, "PROCESSING_HALTED", "The transaction was rolled back since another operation in the same transaction failed.")
            let finished = responses
            responses = subrequests.enumerated().map { offset, subrequest in
                if offset < finished.count, (finished[offset]["httpStatusCode"]?.integerValue ?? 0) >= 400 { return finished[offset] }
                return ["body": .array([halted.restError]), "httpHeaders": [:], "httpStatusCode": 400,
                        "referenceId": subrequest["referenceId"] ?? .null]
            }
        } catch {
            throw APIError.unexpected(error)
        }
        return (responses, failed)
    }

    /// Resolves references in one subrequest and runs it through the REST router.
    private func runSubrequest(_ subrequest: JSONValue, results: [String: JSONValue], in db: Database) throws(APIError) -> EmulatorResponse {
        let url = try Self.resolveReferences(in: subrequest["url"]!.stringValue!, results: results)
        let (path, query) = Self.splitURL(url)
        let parts = Self.components(path)
        guard parts.count >= 3, parts[2].hasPrefix("v") else { throw APIError.notFound }
        let method = subrequest["method"]!.stringValue!
        // Composite runs sObject resources, sObject Collections, query and queryAll — not Bulk
        // uploads (whose CSV bodies a subrequest's JSON cannot carry) nor any other resource.
        guard let (route, parameters, rest) = Self.restRoute(method, path: parts), route.inComposite else {
            return .error(APIError(400, "INVALID_API_INPUT", "Composite doesn't support the resource \(path)"))
        }
        var request = EmulatorRequest(method: method, path: path, query: query, headers: [:], body: Data())
        if let value = subrequest["body"], !value.isNull {
            // Handed over parsed, not written and read again (the routes a subrequest may take
            // read their body as JSON).
            request.json = try Self.resolveReferences(in: value, results: results)
        }
        // Injected record faults fail single writes inside a composite too.
        if request.method != "GET", let fault = faults.recordError() {
            return .error(fault)
        }
        return respond(route, RoutedRequest(request: request, version: String(parts[2].dropFirst()), parameters: parameters,
                                            rest: rest, parts: Array(parts.dropFirst(3)), username: nil, database: db))
    }

    /// Splits `/path?a=b&c=d` into the path and its decoded query parameters.
    static func splitURL(_ url: String) -> (String, [String: String]) {
        guard let mark = url.firstIndex(of: "?") else { return (url, [:]) }
        return (String(url[..<mark]), formFields(String(url[url.index(after: mark)...])))
    }

    static func resolveReferences(in value: JSONValue, results: [String: JSONValue]) throws(APIError) -> JSONValue {
        try resolvedReferences(in: value, results: results) ?? value
    }

    /// `value` with its references resolved; `nil` when it holds none (nothing is copied then).
    private static func resolvedReferences(in value: JSONValue, results: [String: JSONValue]) throws(APIError) -> JSONValue? {
        switch value {
        case .string(let text):
            guard text.utf8.contains(UInt8(ascii: "@")) else { return nil }
            let resolved = try resolveReferences(in: text, results: results)
            return resolved == text ? nil : .string(resolved)
        case .array(var array):
            var changed = false
            for index in array.indices {
                if let element = try resolvedReferences(in: array[index], results: results) {
                    array[index] = element
                    changed = true
                }
            }
            return changed ? .array(array) : nil
        case .object(var object):
            var changed = false
            for (key, member) in object {
                if let resolved = try resolvedReferences(in: member, results: results) {
                    object[key] = resolved
                    changed = true
                }
            }
            return changed ? .object(object) : nil
        default: return nil
        }
    }

    /// Replaces each `@{ref.path[0].field}` in `text` with the value found in an earlier result.
    /// Read as UTF-8 bytes: a Composite of Collections carries a reference for each child's
    /// parent and each record read back, thousands a request.
    static func resolveReferences(in text: String, results: [String: JSONValue]) throws(APIError) -> String {
        let bytes = Array(text.utf8)
        guard var start = referenceStart(in: bytes, from: 0) else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var position = 0
        while true {
            output.append(contentsOf: bytes[position..<start])
            guard let end = bytes[(start + 2)...].firstIndex(of: UInt8(ascii: "}")) else {
                position = start
                break
            }
            let expression = bytes[(start + 2)..<end]
            guard let value = lookup(expression, results: results) else {
                let text = String(decoding: expression, as: UTF8.self)
                let referenceId = String(text.prefix { $0 != "." && $0 != "[" })
                throw APIError(400, "PROCESSING_HALTED",
                               "Invalid reference specified. No value for \(text) found in \(referenceId). Provided referenceId ('\(text)') must start with a letter or a number, and it can contain only letters, numbers and underscores ('_').")
            }
            output.append(contentsOf: (value.stringValue ?? value.jsonString).utf8)
            position = end + 1
            guard let next = referenceStart(in: bytes, from: position) else { break }
            start = next
        }
        output.append(contentsOf: bytes[position...])
        return String(decoding: output, as: UTF8.self)
    }

    /// Where the next `@{` in `bytes` starts, from `position` on.
    private static func referenceStart(in bytes: [UInt8], from position: Int) -> Int? {
        var index = position
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "@") && bytes[index + 1] == UInt8(ascii: "{") { return index }
            index += 1
        }
        return nil
    }

    /// The value a reference's expression (`ref.path[0].field`, as UTF-8) names in the results
    /// so far; `nil` when there is none (or it is null).
    static func lookup(_ expression: some Collection<UInt8>, results: [String: JSONValue]) -> JSONValue? {
        var value: JSONValue?
        var token: [UInt8] = []
        /// Steps into the member or element the token names; false when there is none.
        func step() -> Bool {
            defer { token.removeAll(keepingCapacity: true) }
            guard !token.isEmpty else { return true }
            let name = String(decoding: token, as: UTF8.self)
            guard let current = value else {
                value = results[name]
                return value != nil
            }
            if let index = Int(name), let array = current.arrayValue {
                guard array.indices.contains(index) else { return false }
                value = array[index]
            } else if let member = current[name] {
                value = member
            } else {
                return false
            }
            return true
        }
        for byte in expression {
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") {
                guard step() else { return nil }
            } else {
                token.append(byte)
            }
        }
        guard step(), let value, !value.isNull else { return nil }
        return value
    }
}
