import Foundation
import GRDB
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

    /// The request-level faults: a stall, latency (on the org's clock), the deadline that latency
    /// may carry a request past (nothing of it applied), and injected errors. `nil` lets the
    /// request through.
    func injectFaults(isWrite: Bool, arrival: ContinuousClock.Instant) async -> EmulatorResponse? {
        if faults.stalls(isWrite: isWrite, stats: stats) { await stall() }
        let delay = faults.latencyMs(isWrite: isWrite)
        if delay > 0 { await clock.sleep(for: .milliseconds(delay)) }
        if clock.instant() - arrival > requestDeadline {
            // Past the deadline the org stops the request: nothing of it is applied.
            return .error(APIError(500, "REQUEST_RUNNING_TOO_LONG", "Your request was running for too long, and has been stopped."))
        }
        if let error = faults.requestError() { return .error(error) }
        return nil
    }


    /// Answers a write request inside one transaction, rolled back whole when the request's
    /// deadline has passed by the time it would commit: nothing of a request answered
    /// REQUEST_RUNNING_TOO_LONG is ever applied, however long it queued or ran.
    func routeWithinDeadline(arrival: ContinuousClock.Instant, _ answer: (Database) -> EmulatorResponse) -> EmulatorResponse {
        var response = EmulatorResponse(status: 500)
        do {
            try store.queue.write { db in
                response = answer(db)
                if clock.instant() - arrival > requestDeadline { throw DeadlinePassed() }
            }
        } catch is DeadlinePassed {
            return .error(APIError(500, "REQUEST_RUNNING_TOO_LONG", "Your request was running for too long, and has been stopped."))
        } catch {
            return .error(.unexpected(error))
        }
        return response
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
        guard let token = Self.token(of: request), let user = sessions.authenticate(token, expiryEvery: faults.settings.sessionExpiryEvery) else {
            return .failure(invalid)
        }
        return .success(user)
    }

    static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map { $0.removingPercentEncoding ?? String($0) }
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
    func recordCount(_ request: EmulatorRequest, in outer: Database?) throws(APIError) -> EmulatorResponse {
        let counts: [String: Int]
        do {
            counts = try read(in: outer) { db in try RecordStore.counts(db) }
        } catch {
            throw APIError.unexpected(error)
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
            "DailyApiRequests": entry(faults.settings.dailyRequestLimit, max(0, faults.settings.dailyRequestLimit - dailyRequests)),
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
