import Foundation
import JSON

extension OrgEngine {
    /// Whether an admin request without a token may be answered: on loopback, from a local tool
    /// (a test, `curl`, the command line), never from a web page. A browser names the page's
    /// origin on every cross-origin request it sends and can send a JSON body across origins only
    /// after a preflight this server never grants; so any foreign `Origin`, and any POST that is
    /// not `application/json`, needs the token.
    static func isLocalTool(_ request: EmulatorRequest, instanceURL: String) -> Bool {
        if let origin = request.headers["origin"], origin != instanceURL { return false }
        if request.headers["sec-fetch-site"].map({ $0 != "same-origin" && $0 != "none" }) == true { return false }
        if request.method != "GET" {
            let type = request.headers["content-type"]?.lowercased() ?? ""
            guard type.hasPrefix("application/json") || (request.body.isEmpty && type.isEmpty) else { return false }
        }
        return true
    }

    /// Answers one HTTP request: admin API, OAuth, or the REST API under `/services/data`.
    func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        let parts = Self.components(request.path)
        if parts.first == "emulator" {
            // The admin API is outside the faults: a token is checked, never counted or expired.
            let hasToken = Self.token(of: request).map { tokens[$0] != nil } ?? false
            if !hasToken && (!adminIsOpen || !Self.isLocalTool(request, instanceURL: instanceURL)) {
                return .error(APIError(401, "INVALID_SESSION_ID", "Session expired or invalid"))
            }
            return handleAdmin(request, parts: Array(parts.dropFirst()))
        }
        guard parts.first == "services" || parts.first == "id" else { return .error(.notFound) }
        requestStarted()
        defer { requestFinished() }

        // Faults apply to /services/* only.
        let arrival = request.arrival
        let kind = Self.kind(of: request, parts: parts)
        var request = request
        if kind == "composite" || kind == "graph", request.json == nil, !request.body.isEmpty {
            // Read once: to count the request as a write or not, then to run it.
            request.json = try? JSONParser.parse(request.body).value
        }
        let isWrite = Self.isWrite(request, parts: parts)
        stats.count(kind: kind, isWrite: isWrite)
        if let refusal = await injectFaults(isWrite: isWrite, arrival: arrival) { return refusal }

        if parts.count == 4 && parts[0] == "services" && parts[1] == "Soap" && parts[2] == "u",
           OrgEmulator.apiVersions.contains(parts[3]) {
            return soapLogin(request, version: parts[3])
        }
        if parts.count >= 2 && parts[0] == "services" && parts[1] == "oauth2" {
            return handleOAuth(request, parts: Array(parts.dropFirst(2)))
        }
        if parts == ["services", "data"] {
            return .json(200, .array(OrgEmulator.apiVersions.map { version in
                ["label": .string(OrgEmulator.releaseName(version)), "url": .string("/services/data/v\(version)"), "version": .string(version)]
            }))
        }
        if parts.count >= 3 && parts[0] == "services" && parts[1] == "async", OrgEmulator.apiVersions.contains(parts[2]) {
            dailyRequests += 1
            var response = bulkV1(request, version: parts[2], parts: Array(parts.dropFirst(3)))
            response.headers.append(("Sforce-Limit-Info", "api-usage=\(dailyRequests)/\(faults.dailyRequestLimit)"))
            return response
        }
        let username: String
        switch authenticate(request) {
        case .success(let user): username = user
        case .failure(let error): return .error(error)
        }
        if parts.first == "id" { return identity(username: username) }
        if userIds[username] == nil { userIds[username] = userId(for: username) }
        actingUserId = userIds[username].flatMap { $0 == orgId ? nil : $0 }
        guard parts.count >= 3, parts[0] == "services", parts[1] == "data", parts[2].hasPrefix("v"),
              OrgEmulator.apiVersions.contains(String(parts[2].dropFirst())) else { return .error(.notFound) }

        dailyRequests += 1
        let limitHeader = ("Sforce-Limit-Info", "api-usage=\(dailyRequests)/\(faults.dailyRequestLimit)")
        if dailyRequests > faults.dailyRequestLimit {
            var response = EmulatorResponse.error(APIError(403, "REQUEST_LIMIT_EXCEEDED", "TotalRequests Limit exceeded."))
            response.headers.append(limitHeader)
            return response
        }
        let version = String(parts[2].dropFirst())
        // A write request is one transaction that commits only inside the deadline, as an org
        // stops and rolls back a request running too long (Bulk jobs run apart, as in an org).
        var response = isWrite && kind != "bulk"
            ? routeWithinDeadline(request, version: version, parts: Array(parts.dropFirst(3)))
            : route(request, version: version, parts: Array(parts.dropFirst(3)))
        response.headers.append(limitHeader)
        if isWrite, response.status < 300 || kind == "composite" || kind == "collections",
           random.chance(faults.dropAfterCommitRate) {
            response.drop = true
        }
        return response
    }

    /// The request-level faults: a stall, latency (on the org's clock), the deadline that latency
    /// may carry a request past (nothing of it applied), and injected errors. `nil` lets the
    /// request through.
    func injectFaults(isWrite: Bool, arrival: ContinuousClock.Instant) async -> EmulatorResponse? {
        if faults.stallAfterRequests > 0 && stats.total > faults.stallAfterRequests
            || faults.stallAfterWrites > 0 && isWrite && stats.writes > faults.stallAfterWrites {
            await stall()
        }
        var delay = faults.latencyMs + (isWrite ? faults.writeLatencyMs : 0)
        if faults.latencySpikeMs > 0 && random.chance(faults.latencySpikeRate) { delay += faults.latencySpikeMs }
        if delay > 0 { await clock.sleep(for: .milliseconds(delay)) }
        if clock.instant() - arrival > requestDeadline {
            // Past the deadline the org stops the request: nothing of it is applied.
            return .error(APIError(500, "REQUEST_RUNNING_TOO_LONG", "Your request was running for too long, and has been stopped."))
        }
        if remainingBurst > 0 || random.chance(faults.errorRate) {
            remainingBurst = remainingBurst > 0 ? remainingBurst - 1 : faults.errorBurst
            return .error(APIError(faults.errorStatus, faults.errorCode, "Injected fault: \(faults.errorCode)"))
        }
        return nil
    }

    /// Routes a write request inside one transaction, rolled back whole when the request's
    /// deadline has passed by the time it would commit: nothing of a request answered
    /// REQUEST_RUNNING_TOO_LONG is ever applied, however long it queued or ran.
    func routeWithinDeadline(_ request: EmulatorRequest, version: String, parts: [String]) -> EmulatorResponse {
        var response = EmulatorResponse(status: 500)
        do {
            try store.queue.write { db in
                ambientDatabase = db
                defer { ambientDatabase = nil }
                response = route(request, version: version, parts: parts)
                if clock.instant() - request.arrival > requestDeadline { throw DeadlinePassed() }
            }
        } catch is DeadlinePassed {
            return .error(APIError(500, "REQUEST_RUNNING_TOO_LONG", "Your request was running for too long, and has been stopped."))
        } catch {
            return .error(APIError(500, "UNKNOWN_EXCEPTION", "\(error)"))
        }
        return response
    }

    /// Routes a REST request under `/services/data/vNN.N/`.
    func route(_ request: EmulatorRequest, version: String, parts: [String]) -> EmulatorResponse {
        do {
            switch (request.method, parts.first ?? "") {
            case ("GET", "") where parts.isEmpty:
                return .json(200, resourceIndex(version: version))
            case ("GET", "limits") where parts == ["limits", "recordCount"]:
                return try recordCount(request)
            case ("GET", "limits") where parts.count == 1:
                return .json(200, limits())
            case ("GET", "query"), ("GET", "queryAll"):
                return try query(request, version: version, parts: parts)
            case ("GET", "search") where parts.count == 1:
                return try search(request, version: version)
            case ("GET", "tooling"):
                return try tooling(request, version: version, parts: Array(parts.dropFirst()))
            case (_, "sobjects"):
                return try sobjects(request, version: version, parts: Array(parts.dropFirst()))
            case ("POST", "composite") where parts.count == 2 && parts[1] == "batch":
                return try batch(request)
            case ("POST", "composite") where parts.count == 1:
                return try composite(request, version: version)
            case ("POST", "composite") where parts.count == 2 && parts[1] == "graph":
                return try graph(request, version: version)
            case ("POST", "composite") where parts.count == 3 && parts[1] == "tree":
                return try tree(request, version: version, type: parts[2])
            case (_, "composite") where parts.count >= 2 && parts[1] == "sobjects":
                return try collections(request, version: version, parts: Array(parts.dropFirst(2)))
            case (_, "jobs"):
                return try bulk(request, version: version, parts: Array(parts.dropFirst()))
            default:
                return .error(.notFound)
            }
        } catch {
            return .error(error)
        }
    }

    /// The token a request carries (`Bearer` or `OAuth`), if any.
    static func token(of request: EmulatorRequest) -> String? {
        guard let header = request.headers["authorization"] else { return nil }
        if header.hasPrefix("Bearer ") { return String(header.dropFirst(7)) }
        if header.hasPrefix("OAuth ") { return String(header.dropFirst(6)) }
        return nil
    }

    /// The user a request's bearer token belongs to, counting uses for the session-expiry fault.
    func authenticate(_ request: EmulatorRequest) -> Result<String, APIError> {
        let invalid = APIError(401, "INVALID_SESSION_ID", "Session expired or invalid")
        guard let token = Self.token(of: request), let user = tokens[token] else { return .failure(invalid) }
        if faults.sessionExpiryEvery > 0 {
            requestsSinceExpiry += 1
            if requestsSinceExpiry > faults.sessionExpiryEvery {
                tokens[token] = nil
                requestsSinceExpiry = 0
                return .failure(invalid)
            }
        }
        return .success(user)
    }

    static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map { $0.removingPercentEncoding ?? String($0) }
    }

    /// The `byKind` bucket of a request (docs/emulator.md, `GET /emulator/stats`).
    static func kind(of request: EmulatorRequest, parts: [String]) -> String {
        if parts.count >= 2 && (parts[1] == "oauth2" || parts[1] == "Soap") || parts.first == "id" { return "auth" }
        if parts == ["services", "data"] || parts.count == 3 { return "versions" }
        let rest = Array(parts.dropFirst(3))
        switch rest.first {
        case "limits": return "limits"
        case "query", "queryAll": return "query"
        case "search": return "search"
        case "tooling": return "tooling"
        case "jobs": return "bulk"
        case "composite":
            if rest.count > 1 && rest[1] == "graph" { return "graph" }
            if rest.count > 1 && rest[1] == "tree" { return "tree" }
            if rest.count > 1 && rest[1] == "sobjects" { return "collections" }
            return "composite"
        case "sobjects":
            if rest.count == 1 || rest.last == "describe" { return "describe" }
            if rest.count == 3 && (rest[2] == "updated" || rest[2] == "deleted") { return "changes" }
            return rest.count == 2 && request.method == "GET" ? "describe" : "sobject"
        default: return "versions"
        }
    }

    /// Whether a request asks to create, update, upsert or delete at least one record.
    static func isWrite(_ request: EmulatorRequest, parts: [String]) -> Bool {
        let rest = Array(parts.dropFirst(3))
        switch rest.first {
        case "sobjects": return request.method != "GET"
        case "composite":
            if rest.count > 1 && rest[1] == "sobjects" { return writes(method: request.method, rest: rest) }
            if rest.count > 1 && rest[1] == "tree" { return true }
            guard let body = request.json else { return false }
            let subrequests = body["compositeRequest"]?.arrayValue ?? body["batchRequests"]?.arrayValue
                ?? (body["graphs"]?.arrayValue ?? []).flatMap { $0["compositeRequest"]?.arrayValue ?? [] }
            return subrequests.contains { subrequest in
                let path = Self.components(Self.splitURL(subrequest["url"]?.stringValue ?? "").0)
                return writes(method: subrequest["method"]?.stringValue ?? "GET", rest: Array(path.dropFirst(3)))
            }
        case "jobs":
            return rest.count == 3 && rest[1] == "ingest" && request.method == "PATCH"
                && (try? JSONParser.parse(request.body).value["state"]?.stringValue) == "UploadComplete"
        default: return false
        }
    }

    /// Whether a call (or a Composite subrequest) under `/services/data/vNN.N/` writes: anything
    /// but a GET, save a Collections retrieve by request body (a POST naming a type).
    private static func writes(method: String, rest: [String]) -> Bool {
        let isRetrieve = method == "POST" && rest.count == 3 && rest[0] == "composite" && rest[1] == "sobjects"
        return method != "GET" && !isRetrieve
    }

    func resourceIndex(version: String) -> JSONValue {
        var object = JSONObject()
        for name in ["sobjects", "query", "queryAll", "search", "composite", "limits", "jobs", "tooling"] {
            object[name] = .string("/services/data/v\(version)/\(name)")
        }
        return .object(object)
    }

    /// `GET /limits/recordCount?sObjects=Account,Contact`: live records per object that has any
    /// (of those named, or of every object), as `{"sObjects": [{"count", "name"}]}`.
    func recordCount(_ request: EmulatorRequest) throws(APIError) -> EmulatorResponse {
        let counts: [String: Int]
        do {
            counts = try read { db in try RecordStore.counts(db) }
        } catch {
            throw APIError(500, "UNKNOWN_EXCEPTION", "\(error)")
        }
        var names = counts.keys.filter { schema.object($0)?.tooling != true }.sorted()
        if let wanted = request.query["sObjects"] {
            // As an org answers: a name it does not know is ignored, not an error.
            names = wanted.split(separator: ",").compactMap { seed.schema.object($0.trimmingCharacters(in: .whitespaces))?.name }
        }
        // An object without records is left out (`{"sObjects" : [ ]}` for it alone), as recorded from orgs.
        names = names.filter { (counts[$0] ?? 0) > 0 }
        return .json(200, ["sObjects": .array(names.map { name in
            ["count": .integer(Int64(counts[name] ?? 0)), "name": .string(name)]
        })])
    }

    func limits() -> JSONValue {
        func entry(_ max: Int, _ remaining: Int) -> JSONValue { ["Max": .integer(Int64(max)), "Remaining": .integer(Int64(remaining))] }
        return [
            "DailyApiRequests": entry(faults.dailyRequestLimit, max(0, faults.dailyRequestLimit - dailyRequests)),
            "DailyAsyncApexExecutions": entry(250000, 250000),
            "DailyBulkApiBatches": entry(15000, 15000),
            "DailyBulkV2QueryFileStorageMB": entry(976562, 976562),
            "DailyBulkV2QueryJobs": entry(10000, 10000),
            "DailyGenericStreamingApiEvents": entry(10000, 10000),
            "DailyStreamingApiEvents": entry(10000, 10000),
            "DataStorageMB": entry(1024, 1024),
            "FileStorageMB": entry(1024, 1024),
            "HourlyTimeBasedWorkflow": entry(50, 50),
            "MassEmail": entry(10, 10),
            "SingleEmail": entry(15, 15),
        ]
    }
}

/// Rolls back a write request whose deadline passed before it could commit.
private struct DeadlinePassed: Error {}
