/// Maps `type` names in pipeline files to stage types.
///
/// Start from ``builtIn`` and ``register(_:as:)`` your own types — or replace a built-in one by
/// registering another type under its name.
public struct StageRegistry: Sendable {
    private var types: [String: any Stage.Type] = [:]

    /// An empty registry.
    public init() {}

    /// The stage types that ship with SyncPipeline.
    public static var builtIn: StageRegistry {
        var registry = StageRegistry()
        registry.register(ReportStage.self)
        registry.register(ExtractSOQLStage.self)
        registry.register(ExtractCSVStage.self)
        registry.register(ExtractXMLStage.self)
        registry.register(SoupStagingStage.self)
        registry.register(MarkDirtyStage.self)
        registry.register(SyncUpStage.self)
        registry.register(SyncDownStage.self)
        registry.register(ResyncStage.self)
        registry.register(CleanGhostsStage.self)
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

    /// Every registered name, sorted.
    public var typeNames: [String] { types.keys.sorted() }
}
