import Connectors
import Formats
import JSON
import SOQL
import Soups

/// `syncDown`: runs a named sync down in full (a sync left STOPPED by a run that died resumes
/// from where it stopped). Records carry `__sync_id__`, are clean, and replace the stored entry
/// — except, under LEAVE_IF_CHANGED, a dirty entry or a tree holding one, left alone and counted
/// as conflicts.
public struct SyncDownStage: Stage {
    public static let typeName = "syncDown"
    public static let countKeys = [StageCounts.created, StageCounts.updated, StageCounts.unchanged, StageCounts.conflicts]

    let sync: SyncDefinition
    let target: any SyncDownTarget

    public init(settings: StageSettings) throws {
        (sync, target) = try Self.resolve(settings)
    }

    public func run(in context: StageContext) async throws -> StageResult {
        try await Self.run(sync: sync, target: target, incremental: false, context: context)
    }

    /// The sync-down sync named by `sync`, and its target (built by the maker registered under
    /// the name the sync gives).
    static func resolve(_ settings: StageSettings) throws -> (SyncDefinition, any SyncDownTarget) {
        guard let sync = settings.sync("sync", type: .syncDown) else { throw StageSettingsInvalid() }
        guard let name = sync.targetName, let registered = settings.registry.syncDownTarget(named: name) else {
            settings.report("sync", "sync \"\(sync.name)\" names no registered sync-down target (registered: \(settings.registry.syncTargetNames(.syncDown).joined(separator: ", ")))")
            throw StageSettingsInvalid()
        }
        do {
            return (sync, try registered.make(sync, settings))
        } catch let error as SOQLError {
            settings.report("sync", "sync \"\(sync.name)\": \(error.errorCode.rawValue) at row \(error.row), column \(error.column): \(error.detail)")
            throw StageSettingsInvalid()
        } catch let error as StageFailure {
            settings.report("sync", "sync \"\(sync.name)\": \(error.message)")
            throw StageSettingsInvalid()
        }
    }

    static func run(sync: SyncDefinition, target: any SyncDownTarget, incremental: Bool, context: StageContext) async throws -> StageResult {
        try await syncDown(target, sync: sync.name, mergeMode: MergeMode(options: sync.options), incremental: incremental, in: context)
    }

    /// Runs a sync down of any ``SyncDownTarget`` — a user's own included — under the named sync's
    /// state (the sync must exist in the store), leaving it FAILED with the reason when it cannot
    /// finish. `incremental` fetches from the sync's `maxTimeStamp`, as `resync` does.
    public static func syncDown(_ target: any SyncDownTarget, sync name: String, mergeMode: MergeMode, incremental: Bool,
                                in context: StageContext) async throws -> StageResult {
        let tracker = try await SyncStateTracker(name: name, store: context.store, progress: context.progress)
        do {
            let syncContext = SyncDownContext(client: try await context.org(), store: context.store, syncId: await tracker.state.id,
                                              mergeMode: mergeMode)
            let engine = SyncDownEngine(target: target, context: syncContext, tracker: tracker, logger: context.logger)
            return try await engine.run(incremental: incremental)
        } catch {
            if await tracker.state.status == .running {
                try? await tracker.finish(Task.isCancelled ? .stopped : .failed, error: "\(error)")
            }
            throw error
        }
    }
}

/// `resync`: re-runs a named sync down incrementally, from its `maxTimeStamp` (in full the first
/// time). Changes in the same second as `maxTimeStamp` are not missed, and children changed under
/// unchanged parents are fetched too.
public struct ResyncStage: Stage {
    public static let typeName = "resync"
    public static let countKeys = SyncDownStage.countKeys

    let sync: SyncDefinition
    let target: any SyncDownTarget

    public init(settings: StageSettings) throws {
        (sync, target) = try SyncDownStage.resolve(settings)
    }

    public func run(in context: StageContext) async throws -> StageResult {
        try await SyncDownStage.run(sync: sync, target: target, incremental: true, context: context)
    }
}

/// `cleanGhosts`: removes the clean local entries of a named sync down that the org no longer
/// holds — never a dirty entry, a parent with a dirty child, an entry another sync wrote, or a
/// record a dirty entry of any soup refers to (by the pipeline's parent-children and graph syncs).
public struct CleanGhostsStage: Stage {
    public static let typeName = "cleanGhosts"
    public static let countKeys = [StageCounts.ghostsRemoved]

    let sync: SyncDefinition
    let target: any SyncDownTarget
    /// The reference fields the pipeline's sync-up syncs declare: (soup, field).
    let referenceFields: [(soup: String, field: String)]

    public init(settings: StageSettings) throws {
        (sync, target) = try SyncDownStage.resolve(settings)
        referenceFields = Self.referenceFields(of: settings.syncs)
    }

    public func run(in context: StageContext) async throws -> StageResult {
        let state = try await SyncStateTracker(name: sync.name, store: context.store, progress: context.progress).state
        if state.status == .running { throw StageFailure(.failed, "sync \"\(sync.name)\" is running; ghosts are cleaned once it has finished") }
        var syncContext = SyncDownContext(client: try await context.org(), store: context.store, syncId: state.id,
                                          mergeMode: MergeMode(options: sync.options))
        guard !context.dryRun else { return StageResult() }
        syncContext.referencedByDirty = try await referencedByDirty(in: context.store)
        return try await target.cleanGhosts(in: syncContext)
    }

    /// The ids that dirty entries hold in reference fields.
    func referencedByDirty(in store: SoupStore) async throws -> Set<String> {
        var ids = Set<String>()
        for (soup, field) in referenceFields {
            var afterId: Int64 = 0
            while true {
                let page = try await store.dirtyEntries(in: soup, afterId: afterId, limit: 2000)
                guard let last = page.last?.soupEntryId else { break }
                afterId = last
                for entry in page {
                    if let id = entry[field]?.stringValue, !id.isEmpty, !SyncField.isLocalId(id) { ids.insert(SalesforceId.key(.string(id))) }
                }
            }
        }
        return ids
    }

    /// Where the syncs' records refer to others: parent-children's parent id field, a graph's
    /// references.
    static func referenceFields(of syncs: [SyncDefinition]) -> [(soup: String, field: String)] {
        var fields: [(soup: String, field: String)] = []
        for sync in syncs where sync.type == .syncUp {
            if let children = sync.target["children"]?.objectValue, let soup = children["soupName"]?.stringValue,
               let field = children["parentIdFieldName"]?.stringValue {
                fields.append((soup, field))
            }
            for object in sync.target["objects"]?.arrayValue ?? [] {
                guard let soup = object["soupName"]?.stringValue else { continue }
                for reference in object["references"]?.arrayValue ?? [] {
                    if let field = reference["field"]?.stringValue { fields.append((soup, field)) }
                }
            }
        }
        return fields
    }
}
