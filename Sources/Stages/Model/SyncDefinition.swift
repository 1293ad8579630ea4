import JSON
import Soups

/// A named sync from `usersyncs.json` (or the inline `syncs` array), read as Mobile SDK writes it.
public struct SyncDefinition: Sendable {
    public var name: String
    public var type: SyncState.SyncType
    public var soupName: String
    public var target: JSONObject
    public var options: JSONObject
    /// Where it was declared, for messages.
    public var file: String
    public var path: String

    public init(name: String, type: SyncState.SyncType, soupName: String, target: JSONObject, options: JSONObject = [:],
                file: String = "", path: String = "") {
        self.name = name
        self.type = type
        self.soupName = soupName
        self.target = target
        self.options = options
        self.file = file
        self.path = path
    }

    /// The target the sync names, as Mobile SDK chooses it: `iOSImpl` / `AndroidImpl` when
    /// present, else `type`; a sync up naming none uses the collection target.
    public var targetName: String? { Self.targetName(of: target, type: type)?.name }

    /// The target name in `target` and the key that gives it.
    static func targetName(of target: JSONObject, type: SyncState.SyncType) -> (name: String, key: String)? {
        for key in ["iOSImpl", "AndroidImpl", "androidImpl", "type"] {
            if let name = target[key]?.stringValue { return (name, key) }
        }
        return type == .syncUp ? ("collection", "type") : nil
    }

    /// The state this sync starts in when first stored.
    public var initialState: SyncState {
        SyncState(name: name, type: type, soupName: soupName, target: target, options: options)
    }
}
