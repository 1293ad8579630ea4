import JSON

/// The report of one run: what each stage did and how many API requests it took.
public struct RunReport: Sendable {
    public var pipeline: String
    public var runId: String
    public var dryRun: Bool
    public var status: RunStatus
    public var exitCode: Int32
    public var startedAt: String
    public var finishedAt: String
    public var reportDir: String
    public var stages: [StageReport]
    public var api: APIUsage
    /// The error that stopped the run, when one did.
    public var error: String?

    /// One stage's line in the report.
    public struct StageReport: Sendable {
        public var id: String
        public var type: String
        public var status: StageStatus
        /// Milliseconds from the run's start to the stage's.
        public var startedMs: Int
        public var durationMs: Int
        public var counts: [String: Int]
        public var byObject: [String: [String: Int]]
        public var error: String?
        /// `true` for stage types that report `byObject` even when empty (sync stages).
        public var alwaysByObject: Bool
    }

    /// API requests made during the run.
    public struct APIUsage: Sendable {
        public var requests: Int = 0
        public var retries: Int = 0
        public var byKind: [String: Int] = [:]
        public var limitInfo: String?

        public init() {}
    }

    /// The `report.json` document.
    public var json: JSONValue {
        var object = JSONObject()
        object["pipeline"] = .string(pipeline)
        object["runId"] = .string(runId)
        object["dryRun"] = .bool(dryRun)
        object["status"] = .string(status.rawValue)
        object["exitCode"] = .integer(Int64(exitCode))
        object["startedAt"] = .string(startedAt)
        object["finishedAt"] = .string(finishedAt)
        object["reportDir"] = .string(reportDir)
        if let error { object["error"] = .string(error) }
        object["stages"] = .array(stages.map { stage in
            var entry = JSONObject()
            entry["id"] = .string(stage.id)
            entry["type"] = .string(stage.type)
            entry["status"] = .string(stage.status.rawValue)
            entry["startedMs"] = .integer(Int64(stage.startedMs))
            entry["durationMs"] = .integer(Int64(stage.durationMs))
            entry["counts"] = .object(stage.counts.sortedJSONObject)
            if stage.alwaysByObject || !stage.byObject.isEmpty {
                var byObject = JSONObject()
                for name in stage.byObject.keys.sorted() { byObject[name] = .object(stage.byObject[name]!.sortedJSONObject) }
                entry["byObject"] = .object(byObject)
            }
            if let error = stage.error { entry["error"] = .string(error) }
            return .object(entry)
        })
        var apiObject = JSONObject()
        apiObject["requests"] = .integer(Int64(api.requests))
        apiObject["retries"] = .integer(Int64(api.retries))
        apiObject["byKind"] = .object(api.byKind.sortedJSONObject)
        apiObject["limitInfo"] = api.limitInfo.map(JSONValue.string) ?? .null
        object["api"] = .object(apiObject)
        return .object(object)
    }
}
