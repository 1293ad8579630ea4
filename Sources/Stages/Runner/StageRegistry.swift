import Soups

/// Maps names in pipeline files to the types that run them: stage `type`s, and the sync targets
/// a sync's `target` names by `iOSImpl` / `AndroidImpl` / `type`.
///
/// Start from ``builtIn`` and register your own — or replace a built-in one by registering
/// another under its name.
public struct StageRegistry: Sendable {
    private var types: [String: any Stage.Type] = [:]
    private var syncUpTargets: [String: RegisteredSyncTarget<SyncUpTargetMaker>] = [:]
    private var syncDownTargets: [String: RegisteredSyncTarget<SyncDownTargetMaker>] = [:]

    /// An empty registry.
    public init() {}

    /// The stage types and sync targets that ship with SyncPipeline.
    public static var builtIn: StageRegistry {
        var registry = StageRegistry()
        registry.register(ReportStage.self)
        registry.register(ExtractSOQLStage.self)
        registry.register(ExtractCSVStage.self)
        registry.register(ExtractXMLStage.self)
        registry.register(TransformStage.self)
        registry.register(SoupStagingStage.self)
        registry.register(MarkDirtyStage.self)
        registry.register(SyncUpStage.self)
        registry.register(SyncDownStage.self)
        registry.register(ResyncStage.self)
        registry.register(CleanGhostsStage.self)
        registry.register(syncUpTarget: ["collection", "SFCollectionSyncUpTarget", "CollectionSyncUpTarget"]) {
            try SoupSyncUpTarget(sync: $0, settings: $1, transport: .collections)
        }
        registry.register(syncUpTarget: ["rest", "SFSyncUpTarget", "SyncUpTarget"]) {
            try SoupSyncUpTarget(sync: $0, settings: $1, transport: .rest)
        }
        registry.register(syncUpTarget: ["batch", "SFBatchSyncUpTarget", "BatchSyncUpTarget"]) {
            try SoupSyncUpTarget(sync: $0, settings: $1, transport: .composite)
        }
        registry.register(syncUpTarget: ["parent_children", "SFParentChildrenSyncUpTarget", "ParentChildrenSyncUpTarget"]) {
            try ParentChildrenSyncUpTarget(sync: $0, settings: $1)
        }
        registry.register(syncUpTarget: ["graph"]) { try GraphSyncUpTarget(sync: $0, settings: $1) }
        registry.register(syncDownTarget: ["soql", "SFSoqlSyncDownTarget", "SoqlSyncDownTarget"]) {
            try SOQLSyncDownTarget(sync: $0, settings: $1)
        }
        registry.register(syncDownTarget: ["parent_children", "SFParentChildrenSyncDownTarget", "ParentChildrenSyncDownTarget"]) {
            try ParentChildrenSyncDownTarget(sync: $0, settings: $1)
        }
        return registry
    }

    /// Registers `type` under `name` (default: its ``Stage/typeName``), replacing any earlier one.
    public mutating func register(_ type: any Stage.Type, as name: String? = nil) {
        types[name ?? type.typeName] = type
    }

    /// The type registered under `name`.
    public func type(named name: String) -> (any Stage.Type)? {
        types[name]
    }

    /// Every registered stage type name, sorted.
    public var typeNames: [String] { types.keys.sorted() }

    /// Registers a sync-up target under `names` — the first is its name in messages, the others
    /// aliases (Mobile SDK class names, say) — replacing any target registered under them.
    public mutating func register(syncUpTarget names: [String], _ make: @escaping SyncUpTargetMaker) {
        for name in names { syncUpTargets[name] = RegisteredSyncTarget(name: names[0], make: make) }
    }

    /// Registers a sync-down target under `names`, as ``register(syncUpTarget:_:)`` does.
    public mutating func register(syncDownTarget names: [String], _ make: @escaping SyncDownTargetMaker) {
        for name in names { syncDownTargets[name] = RegisteredSyncTarget(name: names[0], make: make) }
    }

    /// The sync-up target registered under `name`, or under its last dot-separated part (an
    /// Android class name `com.example.AcmeSyncUpTarget`, a Swift `Module.AcmeSyncUpTarget`).
    public func syncUpTarget(named name: String) -> RegisteredSyncTarget<SyncUpTargetMaker>? {
        syncUpTargets[name] ?? name.split(separator: ".").last.flatMap { syncUpTargets[String($0)] }
    }

    /// The sync-down target registered under `name`, found as ``syncUpTarget(named:)`` is.
    public func syncDownTarget(named name: String) -> RegisteredSyncTarget<SyncDownTargetMaker>? {
        syncDownTargets[name] ?? name.split(separator: ".").last.flatMap { syncDownTargets[String($0)] }
    }

    /// The registered names of sync targets of `type` (aliases left out), sorted.
    public func syncTargetNames(_ type: SyncState.SyncType) -> [String] {
        Set(type == .syncUp ? syncUpTargets.values.map(\.name) : syncDownTargets.values.map(\.name)).sorted()
    }
}
