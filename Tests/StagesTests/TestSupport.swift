import Foundation
import JSON
import Stages
import Synchronization
import Testing

/// A fresh temporary folder per test (tests run in parallel).
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "stages-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Writes `text` to `name` in `directory` and returns the path.
@discardableResult
func write(_ text: String, to name: String, in directory: String) throws -> String {
    let path = (directory as NSString).appendingPathComponent(name)
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Records every event of a run.
final class RecordingObserver: RunObserver {
    private let storage = Mutex<[RunEvent]>([])

    func handle(_ event: RunEvent, at date: Date) {
        storage.withLock { $0.append(event) }
    }

    var events: [RunEvent] { storage.withLock { $0 } }

    var lines: [String] { events.map(\.text) }
}

/// Start/finish order of test stages, shared by the stages of one test through `key`.
actor Timeline {
    static let shared = Timeline()
    private var entries: [String: [String]] = [:]
    private var started: [String: Set<String>] = [:]

    func record(_ key: String, _ entry: String) {
        entries[key, default: []].append(entry)
        if entry.hasPrefix("start:") { started[key, default: []].insert(String(entry.dropFirst(6))) }
    }

    func entries(_ key: String) -> [String] { entries[key] ?? [] }

    func hasStarted(_ key: String, _ stage: String) -> Bool { started[key]?.contains(stage) ?? false }
}

/// A user-defined stage type registered from the test target: it emits `count` records
/// (`{"n": i}`), or passes its inputs through adding `seenBy`, records start/finish in the
/// timeline, and optionally waits for a partner stage to start (proving concurrency) or fails.
struct CountingStage: Stage {
    static let typeName = "test.count"
    static let countKeys = [StageCounts.read, StageCounts.created, StageCounts.rejected]

    let count: Int
    /// Emits its `count` records this many at a time (all at once by default).
    let emitBatch: Int
    /// Reads its inputs this many records at a time.
    let readBatch: Int
    let timelineKey: String
    let waitFor: String?
    let fail: String?
    let failKind: String
    let reject: Int
    let soup: String?
    let sync: String?
    let flag: Bool

    init(settings: StageSettings) throws {
        count = settings.integer("count", default: 0, range: 0...1_000_000)
        emitBatch = settings.integer("emitBatch", default: 1_000_000, range: 1...1_000_000)
        readBatch = settings.integer("readBatch", default: 7, range: 1...100_000)
        timelineKey = settings.string("timeline") ?? UUID().uuidString
        waitFor = settings.string("waitFor")
        fail = settings.string("fail")
        failKind = settings.choice("failKind", of: ["invalidInput", "failed"], default: "failed")
        reject = settings.integer("reject", default: 0)
        soup = settings.soup("soup", required: false)
        sync = settings.sync("sync", required: false)?.name
        flag = settings.bool("flag", default: false)
    }

    func run(in context: StageContext) async throws -> StageResult {
        await Timeline.shared.record(timelineKey, "start:\(context.stageId)")
        var result = StageResult()
        if let waitFor {
            var waited = 0
            while !(await Timeline.shared.hasStarted(timelineKey, waitFor)) {
                try await Task.sleep(for: .milliseconds(10))
                waited += 10
                if waited > 5000 { throw StageFailure(.failed, "\(waitFor) never started while \(context.stageId) ran") }
            }
        }
        if let fail {
            await Timeline.shared.record(timelineKey, "fail:\(context.stageId)")
            throw StageFailure(failKind == "invalidInput" ? .invalidInput : .failed, fail)
        }
        for try await batch in context.inputBatches(batchSize: readBatch) {
            result.add(StageCounts.read, batch.count, object: "Test")
            try await context.emit(batch.map { record in
                var object = record.objectValue ?? JSONObject()
                object["seenBy"] = .string(context.stageId)
                return .object(object)
            })
        }
        if count > 0 {
            for start in stride(from: 0, to: count, by: emitBatch) {
                try await context.emit((start..<min(count, start + emitBatch)).map { ["n": .integer(Int64($0))] })
            }
            result.add(StageCounts.created, count, object: "Test")
        }
        if reject > 0 { result.add(StageCounts.rejected, reject) }
        context.logger.info("done with \(count) records")
        await Timeline.shared.record(timelineKey, "finish:\(context.stageId)")
        return result
    }
}

/// The built-in registry plus the test stage.
var testRegistry: StageRegistry {
    var registry = StageRegistry.builtIn
    registry.register(CountingStage.self)
    registry.register(CustomSyncUpStage.self)
    return registry
}

/// Loads a pipeline from JSON text written into `directory`.
func loadPipeline(_ json: String, in directory: String, variables: [String: String] = [:],
                  registry: StageRegistry = testRegistry) throws(PipelineValidationError) -> PipelineDefinition {
    let path = (directory as NSString).appendingPathComponent("pipeline.json")
    try? json.write(toFile: path, atomically: true, encoding: .utf8)
    return try PipelineLoader(registry: registry, variables: VariableResolver(variables: variables)).load(path: path)
}

/// The diagnostics of a pipeline that must fail to load.
func loadErrors(_ json: String, in directory: String, variables: [String: String] = [:]) -> [String] {
    do {
        _ = try loadPipeline(json, in: directory, variables: variables)
        Issue.record("expected the pipeline to be invalid")
        return []
    } catch {
        return error.diagnostics.map { "\($0.location): \($0.message)" }
    }
}
