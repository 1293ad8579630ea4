import JSON

/// Faults the emulator injects into `/services/*` requests (`POST /emulator/faults`, `--faults`).
struct FaultSettings: Sendable, Equatable {
    var latencyMs = 0
    /// Added to write requests only (slow DML), before they run.
    var writeLatencyMs = 0
    var latencySpikeMs = 0
    var latencySpikeRate = 0.0
    var errorRate = 0.0
    var errorStatus = 503
    var errorCode = "SERVER_UNAVAILABLE"
    /// After an injected error, this many following requests fail too.
    var errorBurst = 0
    var recordErrorRate = 0.0
    var recordErrorCode = "UNABLE_TO_LOCK_ROW"
    var dropAfterCommitRate = 0.0
    var sessionExpiryEvery = 0
    var dailyRequestLimit = 15000
    /// Once this many requests (any kind) have arrived, every further one is held without an
    /// answer until the faults change: a point a test can kill a client at, on any machine.
    var stallAfterRequests = 0
    /// The same, counting write requests only.
    var stallAfterWrites = 0
    /// A Bulk ingest job running in the background holds once it has processed this many rows
    /// (in whole chunks), until the faults change: a job a test can see part-way.
    var bulkPauseAfterRows = 0
    var seed: UInt64 = 42

    static let keys: Set<String> = [
        "latencyMs", "writeLatencyMs", "latencySpikeMs", "latencySpikeRate", "errorRate", "errorStatus", "errorCode", "errorBurst",
        "recordErrorRate", "recordErrorCode", "dropAfterCommitRate", "sessionExpiryEvery", "dailyRequestLimit", "stallAfterRequests",
        "stallAfterWrites", "bulkPauseAfterRows", "seed",
    ]

    /// Reads the settings object; `{}` gives the defaults (no faults).
    init(json: JSONObject) throws(APIError) {
        for key in json.keys where !Self.keys.contains(key) {
            throw APIError(400, "INVALID_FAULT", "unknown fault \"\(key)\"; known: \(Self.keys.sorted().joined(separator: ", "))")
        }
        func int(_ key: String, _ current: Int) throws(APIError) -> Int {
            guard let value = json[key] else { return current }
            guard let number = value.integerValue, number >= 0 else { throw APIError(400, "INVALID_FAULT", "\(key) must be a non-negative integer") }
            return Int(number)
        }
        func rate(_ key: String, _ current: Double) throws(APIError) -> Double {
            guard let value = json[key] else { return current }
            guard let number = value.doubleValue, (0...1).contains(number) else { throw APIError(400, "INVALID_FAULT", "\(key) must be a number from 0 to 1") }
            return number
        }
        latencyMs = try int("latencyMs", latencyMs)
        writeLatencyMs = try int("writeLatencyMs", writeLatencyMs)
        latencySpikeMs = try int("latencySpikeMs", latencySpikeMs)
        latencySpikeRate = try rate("latencySpikeRate", latencySpikeRate)
        errorRate = try rate("errorRate", errorRate)
        errorStatus = try int("errorStatus", errorStatus)
        errorCode = json["errorCode"]?.stringValue ?? errorCode
        errorBurst = try int("errorBurst", errorBurst)
        recordErrorRate = try rate("recordErrorRate", recordErrorRate)
        recordErrorCode = json["recordErrorCode"]?.stringValue ?? recordErrorCode
        dropAfterCommitRate = try rate("dropAfterCommitRate", dropAfterCommitRate)
        sessionExpiryEvery = try int("sessionExpiryEvery", sessionExpiryEvery)
        dailyRequestLimit = try int("dailyRequestLimit", dailyRequestLimit)
        stallAfterRequests = try int("stallAfterRequests", stallAfterRequests)
        stallAfterWrites = try int("stallAfterWrites", stallAfterWrites)
        bulkPauseAfterRows = try int("bulkPauseAfterRows", bulkPauseAfterRows)
        seed = UInt64(try int("seed", Int(seed)))
    }

    init() {}
}

/// A small deterministic random generator (SplitMix64), so faults repeat for a given seed.
struct SeededRandom: Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// A double in [0, 1).
    mutating func next() -> Double {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }

    /// `true` with probability `rate`.
    mutating func chance(_ rate: Double) -> Bool {
        rate > 0 && next() < rate
    }
}
