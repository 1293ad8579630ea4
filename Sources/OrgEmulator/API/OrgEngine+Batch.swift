import Foundation
import GRDB
import JSON

extension OrgEngine {
    /// The most subrequests one `composite/batch` request may hold.
    static let batchLimit = 25

    /// `POST /composite/batch`: up to 25 independent subrequests (`{"method", "url", "richInput"}`,
    /// urls like `v62.0/sobjects/Account/001…`), each run on its own — no shared transaction, no
    /// references — answered as `{"hasErrors", "results": [{"statusCode", "result"}]}`. With
    /// `haltOnError`, those after a failure answer 412 BATCH_PROCESSING_HALTED.
    func batch(_ request: EmulatorRequest, in outer: Database?) throws(APIError) -> EmulatorResponse {
        let body = try request.jsonBody()
        guard let subrequests = body["batchRequests"]?.arrayValue, !subrequests.isEmpty else {
            throw APIError.badJSON("'batchRequests' is a required field.")
        }
        guard subrequests.count <= Self.batchLimit else {
            throw APIError(400, "LIMIT_EXCEEDED", "A batch cannot contain more than \(Self.batchLimit) requests.")
        }
        let haltOnError = body["haltOnError"]?.boolValue ?? false
        var results: [JSONValue] = []
        var hasErrors = false
        for subrequest in subrequests {
            if haltOnError && hasErrors {
                results.append(["statusCode": 412, "result": [["errorCode": "BATCH_PROCESSING_HALTED",
                                                               "message": "Batch processing halted per request"]]])
                continue
            }
            let response = runBatchSubrequest(subrequest, in: outer)
            hasErrors = hasErrors || response.status >= 400
            results.append(["statusCode": .integer(Int64(response.status)), "result": response.jsonBody])
        }
        return .json(200, ["hasErrors": .bool(hasErrors), "results": .array(results)])
    }

    private func runBatchSubrequest(_ subrequest: JSONValue, in outer: Database?) -> EmulatorResponse {
        guard let method = subrequest["method"]?.stringValue, let url = subrequest["url"]?.stringValue else {
            return .error(APIError(400, "INVALID_BATCH_REQUEST", "Each batch request needs a method and a url."))
        }
        let (path, query) = Self.splitURL(url.hasPrefix("/") ? url : "/services/data/" + url)
        let parts = Self.components(path)
        guard parts.count >= 3, parts[0] == "services", parts[1] == "data", parts[2].hasPrefix("v"),
              OrgEmulator.apiVersions.contains(String(parts[2].dropFirst())) else { return .error(.notFound) }
        if parts.count > 3 && parts[3] == "composite" {
            return .error(APIError(400, "INVALID_BATCH_REQUEST", "Composite requests cannot be nested in a batch."))
        }
        let input = subrequest["richInput"].flatMap { $0.isNull ? nil : Data($0.jsonString.utf8) } ?? Data()
        let inner = EmulatorRequest(method: method, path: path, query: query, headers: [:], body: input)
        if method != "GET", let fault = faults.recordError() {
            return .error(fault)
        }
        guard let (route, parameters, rest) = Self.restRoute(method, path: parts) else { return .error(.notFound) }
        return respond(route, RoutedRequest(request: inner, version: String(parts[2].dropFirst()), parameters: parameters,
                                            rest: rest, parts: Array(parts.dropFirst(3)), username: nil, database: outer))
    }
}
