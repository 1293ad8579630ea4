import Foundation
import JSON
import SOQL

/// Something that happened during a run, as shown on the console, in `--log-format json` lines and
/// in `run.log`.
public enum RunEvent: Sendable {
    case runStarted(runId: String, pipeline: String, dryRun: Bool)
    case stageStarted(stage: String, type: String)
    /// Mobile Sync sync-state progress: RUNNING 0 with totalSize -1 first, then per batch, then DONE 100 or FAILED.
    case progress(stage: String, sync: String?, status: String, progress: Int, totalSize: Int)
    /// How far a stage that is not a sync has come: `done` of `total` (unknown while its input
    /// still grows) `unit`s (`bytes` of a file, `records`), at `rate` per second.
    case work(stage: String, done: Int64, total: Int64?, unit: String, rate: Double)
    case log(level: LogLevel, stage: String?, message: String)
    case stageFinished(stage: String, status: StageStatus, counts: [String: Int], durationMs: Int, error: String?)
    case runFinished(status: RunStatus, exitCode: Int32, reportDir: String)

    public enum LogLevel: String, Sendable, Comparable {
        case debug, info, warning, error

        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
            let order: [LogLevel] = [.debug, .info, .warning, .error]
            return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
        }
    }

    /// The event's name in JSON log lines.
    public var name: String {
        switch self {
        case .runStarted: return "runStarted"
        case .stageStarted: return "stageStarted"
        case .progress, .work: return "progress"
        case .log: return "log"
        case .stageFinished: return "stageFinished"
        case .runFinished: return "runFinished"
        }
    }

    /// The JSON log line for this event (without a trailing newline).
    public func jsonLine(at date: Date) -> String {
        var object = JSONObject()
        object["ts"] = .string(Timestamp.iso8601(date))
        var level = "info"
        switch self {
        case .log(let logLevel, _, _): level = logLevel.rawValue
        case .stageFinished(_, let status, _, _, _) where status == .failed: level = "error"
        case .runFinished(let status, _, _) where status == .failed: level = "error"
        default: break
        }
        object["level"] = .string(level)
        object["event"] = .string(name)
        switch self {
        case .runStarted(let runId, let pipeline, let dryRun):
            object["runId"] = .string(runId)
            object["pipeline"] = .string(pipeline)
            object["dryRun"] = .bool(dryRun)
        case .stageStarted(let stage, let type):
            object["stage"] = .string(stage)
            object["type"] = .string(type)
        case .progress(let stage, let sync, let status, let progress, let totalSize):
            object["stage"] = .string(stage)
            object["sync"] = sync.map(JSONValue.string) ?? .null
            object["status"] = .string(status)
            object["progress"] = .integer(Int64(progress))
            object["totalSize"] = .integer(Int64(totalSize))
        case .work(let stage, let done, let total, let unit, let rate):
            // The sync-state keys as for a sync (`totalSize` -1 while unknown), and the work's own.
            object["stage"] = .string(stage)
            object["sync"] = .null
            object["status"] = "RUNNING"
            object["progress"] = .integer(total.map { $0 > 0 ? min(100, done * 100 / $0) : 0 } ?? 0)
            object["totalSize"] = .integer(total ?? -1)
            object["done"] = .integer(done)
            object["unit"] = .string(unit)
            object["ratePerSecond"] = .integer(Int64(rate.rounded()))
            if let seconds = Self.eta(done: done, total: total, rate: rate) { object["etaSeconds"] = .integer(Int64(seconds)) }
        case .log(_, let stage, let message):
            if let stage { object["stage"] = .string(stage) }
            object["message"] = .string(message)
        case .stageFinished(let stage, let status, let counts, let durationMs, let error):
            object["stage"] = .string(stage)
            object["status"] = .string(status.rawValue)
            object["counts"] = .object(counts.sortedJSONObject)
            object["durationMs"] = .integer(Int64(durationMs))
            if let error { object["error"] = .string(error) }
        case .runFinished(let status, let exitCode, let reportDir):
            object["status"] = .string(status.rawValue)
            object["exitCode"] = .integer(Int64(exitCode))
            object["reportDir"] = .string(reportDir)
        }
        return JSONValue.object(object).jsonString
    }

    /// A one-line human description, as written to `run.log` and to a non-terminal console.
    public var text: String {
        switch self {
        case .runStarted(let runId, let pipeline, let dryRun):
            return "run \(runId) of \(pipeline) started\(dryRun ? " (dry run)" : "")"
        case .stageStarted(let stage, let type): return "[\(stage)] started (\(type))"
        case .progress(let stage, let sync, let status, let progress, let totalSize):
            return "[\(stage)] \(sync.map { "\($0) " } ?? "")\(status) \(progress)%" + (totalSize >= 0 ? " of \(totalSize)" : "")
        case .work(let stage, let done, let total, let unit, let rate):
            return "[\(stage)] " + Self.describeWork(done: done, total: total, unit: unit, rate: rate)
        case .log(let level, let stage, let message):
            return "\(stage.map { "[\($0)] " } ?? "")\(level == .info ? "" : level.rawValue + ": ")\(message)"
        case .stageFinished(let stage, let status, let counts, let durationMs, let error):
            let summary = counts.sorted { $0.key < $1.key }.filter { $0.value != 0 }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "[\(stage)] \(status.rawValue) in \(durationMs) ms\(summary.isEmpty ? "" : ": " + summary)\(error.map { " — \($0)" } ?? "")"
        case .runFinished(let status, let exitCode, let reportDir):
            return "run \(status.rawValue) (exit \(exitCode)); report in \(reportDir)"
        }
    }
}

extension RunEvent {
    /// Seconds left at `rate`, when the total is known.
    static func eta(done: Int64, total: Int64?, rate: Double) -> Int? {
        guard let total, rate > 0, total >= done else { return nil }
        return Int((Double(total - done) / rate).rounded(.up))
    }

    /// `43% · 5.2 MB of 12.1 MB · 4.1 MB/s · 2 s left`, or `12,000 records · 8,000 records/s`.
    public static func describeWork(done: Int64, total: Int64?, unit: String, rate: Double) -> String {
        func amount(_ value: Int64) -> String {
            guard unit == "bytes" else { return grouped(value) + " " + unit }
            let units = ["B", "KB", "MB", "GB", "TB"]
            var size = Double(value)
            var index = 0
            while size >= 1000 && index < units.count - 1 {
                size /= 1000
                index += 1
            }
            return index == 0 ? "\(value) B" : String(format: "%.1f %@", size, units[index])
        }
        var parts: [String] = []
        if let total, total > 0 {
            parts.append("\(min(100, done * 100 / total))%")
            parts.append("\(amount(done)) of \(amount(total))")
        } else {
            parts.append(amount(done))
        }
        if rate > 0 { parts.append("\(amount(Int64(rate.rounded())))/s") }
        if let seconds = eta(done: done, total: total, rate: rate) {
            parts.append(seconds < 60 ? "\(seconds) s left" : "\(seconds / 60) min \(seconds % 60) s left")
        }
        return parts.joined(separator: " · ")
    }

    static func grouped(_ value: Int64) -> String {
        let digits = String(value)
        var text = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(character)
        }
        return text
    }
}

/// Receives a run's events as they happen (the CLI renders them; tests record them).
public protocol RunObserver: Sendable {
    func handle(_ event: RunEvent, at date: Date)
}

/// A stage's final status.
public enum StageStatus: String, Sendable {
    case succeeded, partial, failed, skipped
}

/// A run's final status.
public enum RunStatus: String, Sendable {
    case succeeded, failed, partial, stopped
}

/// Formats instants the way reports and logs show them.
public enum Timestamp {
    /// UTC ISO-8601 with milliseconds, e.g. `2026-11-22T06:15:00.123Z` (``SOQLDateTime``'s form).
    public static func iso8601(_ date: Date) -> String {
        SOQLDateTime(epochMilliseconds: milliseconds(date))?.description ?? "1970-01-01T00:00:00.000Z"
    }

    /// Epoch milliseconds.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A run id: `YYYYMMDDTHHMMSSZ-<6 hex>`.
    public static func runId(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let stamp = String(format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                           Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return stamp + "-" + String(format: "%06x", UInt32.random(in: 0...0xFFFFFF))
    }
}

extension Dictionary where Key == String, Value == Int {
    /// The counts as a JSON object with keys sorted.
    var sortedJSONObject: JSONObject {
        var object = JSONObject()
        for key in keys.sorted() { object[key] = .integer(Int64(self[key]!)) }
        return object
    }
}
