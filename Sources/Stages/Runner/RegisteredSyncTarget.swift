import Soups

/// Builds a sync-up target from a sync's definition (its `target` JSON and `options`); problems
/// go to `settings` (``StageSettings/report(_:_:)``), then throw ``StageSettingsInvalid``.
public typealias SyncUpTargetMaker = @Sendable (_ sync: SyncDefinition, _ settings: StageSettings) throws -> any SyncUpTarget

/// Builds a sync-down target from a sync's definition, as ``SyncUpTargetMaker`` does.
public typealias SyncDownTargetMaker = @Sendable (_ sync: SyncDefinition, _ settings: StageSettings) throws -> any SyncDownTarget

/// A sync target in a ``StageRegistry``: its name and how to build it.
public struct RegisteredSyncTarget<Maker: Sendable>: Sendable {
    /// The name it was registered under first (the one messages use).
    public let name: String
    public let make: Maker

    /// `true` for the built-in parent-children targets, whose JSON the loader checks.
    var isParentChildren: Bool { name == "parent_children" }
}
