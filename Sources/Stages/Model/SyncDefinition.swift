import JSON
import Soups

/// A named sync from `usersyncs.json` (or the inline `syncs` array), read as Mobile SDK writes it.
public struct SyncDefinition: Sendable {
    /// Which sync-up target class a sync names (SPEC §3).
    public enum SyncUpTargetKind: String, Sendable {
        case rest, batch, collection, parentChildren = "parent_children"
    }

    /// Which sync-down target a sync names.
    public enum SyncDownTargetKind: String, Sendable {
        case soql, parentChildren = "parent_children"
    }

    public var name: String
    public var type: SyncState.SyncType
    public var soupName: String
    public var target: JSONObject
    public var options: JSONObject
    /// Where it was declared, for messages.
    public var file: String
    public var path: String

    /// The sync-up target class, from `iOSImpl` / `AndroidImpl` when present, else `type`, else
    /// the collection target — as Mobile SDK chooses it.
    public var syncUpTargetKind: SyncUpTargetKind {
        Self.syncUpTargetKind(of: target)
    }

    static func syncUpTargetKind(of target: JSONObject) -> SyncUpTargetKind {
        let impl = target["iOSImpl"]?.stringValue ?? target["AndroidImpl"]?.stringValue ?? target["androidImpl"]?.stringValue
        if let impl {
            if impl.hasSuffix("ParentChildrenSyncUpTarget") { return .parentChildren }
            if impl.hasSuffix("BatchSyncUpTarget") { return .batch }
            if impl.hasSuffix("CollectionSyncUpTarget") { return .collection }
            if impl.hasSuffix("SyncUpTarget") { return .rest }
        }
        switch target["type"]?.stringValue {
        case "rest": return .rest
        case "batch": return .batch
        case "parent_children": return .parentChildren
        default: return .collection
        }
    }

    /// The sync-down target kind named by `type`, or `nil` when it is not one we run.
    public var syncDownTargetKind: SyncDownTargetKind? {
        SyncDownTargetKind(rawValue: target["type"]?.stringValue ?? "")
    }

    /// The state this sync starts in when first stored.
    public var initialState: SyncState {
        SyncState(name: name, type: type, soupName: soupName, target: target, options: options)
    }
}
