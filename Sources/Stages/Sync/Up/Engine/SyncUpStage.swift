import Connectors
import Foundation
import JSON
import Soups

/// `syncUp`: Mobile Sync's sync up of a soup, or of parent-children trees, packed into few
/// requests (docs/stages.md). `sync` names a sync-up sync, or `soup` + `target` + `options` declare one
/// inline; `strategy` chooses the transport (`auto`, `collections`, `composite`, `graph`, `bulk`,
/// `perTree`, `rest`); `bulkThreshold` (default 2,000) is where `auto` turns to Bulk 2.0 for a flat
/// target; `bulkJobRecords` caps the records of one Bulk ingest job (else a job takes ~100 MB of
/// CSV); `pageSize` is how many trees are loaded and saved together; `maxInFlight` caps concurrent
/// requests; `minApiRemainingPercent` stops the stage before the org's daily API budget runs out;
/// `stopAfterFailedRequests` (default 5) and `stopAfterSilenceSeconds` (default 120) stop it once
/// that many requests in a row, then three probes, got no answer and the org has said nothing for
/// that long (it is down); `recordRetries` (default 3) is how many times a record refused for a
/// passing reason (a row lock, a busy org) is sent again within the run.
public struct SyncUpStage: Stage {
    public static let typeName = "syncUp"
    public static let writesToOrg = true
    public static let countKeys = [StageCounts.created, StageCounts.updated, StageCounts.deleted, StageCounts.conflicts,
                                   StageCounts.failed, StageCounts.uncertain, StageCounts.rejected]

    let sync: SyncDefinition
    /// `true` when the sync is declared in the stage and must be created in the store.
    let inline: Bool
    let target: any SyncUpTarget
    let strategy: SyncUpStrategy
    let bulkThreshold: Int
    let bulkJobRecords: Int?
    let pageSize: Int?
    let maxInFlight: Int?
    let minApiRemainingPercent: Double?
    let stopAfterFailedRequests: Int
    let stopAfterSilenceSeconds: Int
    let recordRetries: Int

    /// Requests in a row without an answer that stop the stage: five, each already retried by the
    /// client, is no passing hiccup of a loaded org (those come one or two at a time).
    public static let defaultStopAfterFailedRequests = 5
    /// Seconds without any answer before the stage stops: two minutes of probes outlast a slow
    /// spell of a loaded org (or of a starved client), and little is sent into an org that is down.
    public static let defaultStopAfterSilenceSeconds = 120
    /// Times a record refused for a passing reason (a row lock, a busy org) is sent again in a run.
    public static let defaultRecordRetries = 3

    public init(settings: StageSettings) throws {
        if settings.object["sync"] != nil {
            guard let named = settings.sync("sync", type: .syncUp) else { throw StageSettingsInvalid() }
            sync = named
            inline = false
        } else {
            guard let soup = settings.soup("soup") else {
                settings.report(nil, "give either \"sync\" (a sync-up sync's name) or \"soup\" with an optional \"target\" and \"options\"")
                throw StageSettingsInvalid()
            }
            sync = SyncDefinition(name: "\(settings.stageId)", type: .syncUp, soupName: soup,
                                  target: settings.object("target") ?? JSONObject(), options: settings.object("options") ?? JSONObject(),
                                  file: "", path: settings.path)
            inline = true
        }
        strategy = SyncUpStrategy(rawValue: settings.choice("strategy", of: SyncUpStrategy.allCases.map(\.rawValue), default: "auto")) ?? .auto
        bulkThreshold = settings.integer("bulkThreshold", default: 2000, range: 1...100_000_000)
        bulkJobRecords = settings.object["bulkJobRecords"] == nil ? nil : settings.integer("bulkJobRecords", default: 150_000_000, range: 1...150_000_000)
        pageSize = settings.object["pageSize"] == nil ? nil : settings.integer("pageSize", default: 1000, range: 1...100_000)
        maxInFlight = settings.object["maxInFlight"] == nil ? nil : settings.integer("maxInFlight", default: 8, range: 1...64)
        if let value = settings.value("minApiRemainingPercent") {
            if let number = value.doubleValue ?? value.integerValue.map(Double.init), (0...100).contains(number) {
                minApiRemainingPercent = number
            } else {
                settings.report("minApiRemainingPercent", "must be a number from 0 to 100")
                minApiRemainingPercent = nil
            }
        } else {
            minApiRemainingPercent = nil
        }
        stopAfterFailedRequests = settings.integer("stopAfterFailedRequests", default: SyncUpStage.defaultStopAfterFailedRequests, range: 1...1000)
        stopAfterSilenceSeconds = settings.integer("stopAfterSilenceSeconds", default: SyncUpStage.defaultStopAfterSilenceSeconds, range: 0...86_400)
        recordRetries = settings.integer("recordRetries", default: SyncUpStage.defaultRecordRetries, range: 0...10)
        target = try Self.target(for: sync, settings: settings)
        if target is any SyncUpRecordWriter && ![.auto, .rest].contains(strategy) {
            settings.report("strategy", "sync \"\(sync.name)\" uses a target that writes its records itself (createOnServer, updateOnServer, deleteOnServer), one at a time: \"strategy\" must be \"auto\" or \"rest\"")
        }
        if strategy == .bulk && target.hasChildren {
            settings.report("strategy", "\"bulk\" applies to single-soup targets; a parent-children sync up uses collections, composite, graph or perTree")
        }
    }

    /// The target a sync names, built by the maker registered under that name.
    static func target(for sync: SyncDefinition, settings: StageSettings) throws -> any SyncUpTarget {
        guard let name = sync.targetName, let registered = settings.registry.syncUpTarget(named: name) else {
            settings.report(sync.path.isEmpty ? "target" : "sync",
                            "no sync-up target named \"\(sync.targetName ?? "")\" is registered (registered: \(settings.registry.syncTargetNames(.syncUp).joined(separator: ", ")))")
            throw StageSettingsInvalid()
        }
        return try registered.make(sync, settings)
    }

    public func run(in context: StageContext) async throws -> StageResult {
        if inline { try await context.store.syncs.create(sync.initialState) }
        return try await Self.syncUp(target, sync: sync.name, mergeMode: MergeMode(options: sync.options), strategy: strategy,
                                     bulkThreshold: bulkThreshold, bulkJobRecords: bulkJobRecords, pageSize: pageSize,
                                     maxInFlight: maxInFlight, minApiRemainingPercent: minApiRemainingPercent,
                                     stopAfterFailedRequests: stopAfterFailedRequests, stopAfterSilenceSeconds: stopAfterSilenceSeconds,
                                     recordRetries: recordRetries, in: context)
    }

    /// Runs a sync up of any ``SyncUpTarget`` — a user's own included — under the named sync's
    /// state, with the journal, packing, conflict check, result files and dry-run plan of the
    /// built-in targets. The sync must exist in the store (declared in the pipeline's `syncs`).
    public static func syncUp(_ target: any SyncUpTarget, sync name: String, mergeMode: MergeMode, strategy: SyncUpStrategy = .auto,
                              bulkThreshold: Int = 2000, bulkJobRecords: Int? = nil, pageSize: Int? = nil, maxInFlight: Int? = nil,
                              minApiRemainingPercent: Double? = nil, stopAfterFailedRequests: Int = SyncUpStage.defaultStopAfterFailedRequests,
                              stopAfterSilenceSeconds: Int = SyncUpStage.defaultStopAfterSilenceSeconds,
                              recordRetries: Int = SyncUpStage.defaultRecordRetries, in context: StageContext) async throws -> StageResult {
        let tracker = try await SyncStateTracker(name: name, store: context.store, progress: context.progress)
        try await tracker.start()
        let files = SyncUpResultFiles(directory: context.reportDirectory, stageId: context.stageId)
        // One tally for every engine of the stage (a graph's passes, then the target): a record
        // one leaves uncertain and a later one settles counts once, by its last state.
        var tally = SyncUpEngine.Tally()
        let attempts = SyncUpAttempts(planning: context.dryRun)
        let breaker = SyncUpBreaker(threshold: stopAfterFailedRequests, silence: .seconds(stopAfterSilenceSeconds))
        do {
            let client = try await context.org()
            func run(_ target: any SyncUpTarget) async throws {
                let engine = SyncUpEngine(
                    target: target,
                    settings: .init(syncName: name, mergeMode: mergeMode, strategy: strategy,
                                    bulkThreshold: bulkThreshold, maxInFlight: maxInFlight ?? Self.orgMaxInFlight(context),
                                    minApiRemainingPercent: minApiRemainingPercent, dryRun: context.dryRun, stageId: context.stageId,
                                    bulkJobRecords: bulkJobRecords, pageSize: pageSize, recordRetries: recordRetries),
                    store: context.store, client: client, tracker: tracker, files: files, logger: context.logger,
                    validator: context.dryRun ? SyncUpRecordValidator(client: client, attempts: attempts) : nil,
                    shouldStop: { Task.isCancelled }, breaker: breaker)
                try await engine.run(into: &tally)
            }
            // A target made of passes runs them round after round while they take new records.
            // A round that takes nothing gets one more (a graph breaks a cycle there); two end it.
            var idle = 0
            while idle < 2, let passes = target.passes(sharing: attempts), !Task.isCancelled {
                let taken = attempts.count
                for pass in passes { try await run(pass) }
                idle = attempts.count == taken ? idle + 1 : 0
            }
            try await run(target)
            try await files.add(tally.close())
            try await files.finish()
            if await tracker.state.status == .running { try await tracker.finish(.done) }
        } catch {
            // Keep and report what was committed before the stop (or before the result files or
            // the sync's state failed); `close()` hands its rows out once.
            try? await files.add(tally.close())
            try? await files.finish()
            try? await tracker.finish(.failed, error: "\(error)")
            let failure = error as? StageFailure
            if failure == nil && tally.result.counts.isEmpty { throw error }
            throw StageFailure(.failed, failure?.message ?? "\(error)", partialResult: tally.result)
        }
        return tally.result
    }

    static func orgMaxInFlight(_ context: StageContext) -> Int {
        if case .remote(let settings) = context.pipeline.org, let value = settings.maxInFlight { return value }
        return 8
    }
}
