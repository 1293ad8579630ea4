import Foundation
import JSON

/// The emulator's own admin API: `/emulator/stats`, `/reset`, `/clock`, `/faults`.
extension OrgEngine {
    func handleAdmin(_ request: EmulatorRequest, parts: [String]) -> EmulatorResponse {
        do {
            switch (request.method, parts.first ?? "") {
            case ("GET", "stats"):
                return .json(200, statsBody())
            case ("POST", "reset"):
                try reset()
                return .json(200, ["reset": true])
            case ("POST", "clock"):
                guard let seconds = try request.jsonBody()["advanceSeconds"]?.integerValue, seconds >= 0 else {
                    throw APIError(400, "INVALID_CLOCK", "expected {\"advanceSeconds\": N} with N >= 0")
                }
                clock.advance(bySeconds: seconds)
                return .json(200, ["now": .string(SalesforceTime.format(clock.now()))])
            case ("POST", "faults"):
                let body = request.body.isEmpty ? JSONValue.object(JSONObject()) : try request.jsonBody()
                guard let object = body.objectValue else { throw APIError(400, "INVALID_FAULT", "expected a JSON object") }
                setFaults(try FaultSettings(json: object))
                return .json(200, ["faults": body])
            default:
                return .error(.notFound)
            }
        } catch let error as APIError {
            return .error(error)
        } catch {
            return .error(.unexpected(error))
        }
    }

    /// `GET /emulator/stats`: requests by kind, writes and in flight, records by object, the
    /// daily request counter and the clock's offset.
    func statsBody() -> JSONValue {
        let counts = (try? read(in: nil) { db in try RecordStore.counts(db) }) ?? [:]
        var records = JSONObject()
        for name in schema.objects.filter({ !$0.tooling }).map(\.name).sorted() { records[name] = .integer(Int64(counts[name] ?? 0)) }
        var byKind = JSONObject()
        for name in stats.byKind.keys.sorted() { byKind[name] = .integer(Int64(stats.byKind[name]!)) }
        return [
            "requests": ["total": .integer(Int64(stats.total)), "writes": .integer(Int64(stats.writes)),
                         "inFlight": .integer(Int64(inFlight)), "byKind": .object(byKind)],
            "records": .object(records), "dailyRequests": .integer(Int64(dailyRequests)),
            "clockOffsetSeconds": .integer(clock.offsetSeconds),
        ]
    }
}
