import JSON

/// How a sync treats local changes it meets (Mobile Sync's `options.mergeMode`).
public enum MergeMode: String, Sendable {
    /// Sync down replaces local entries, dirty or not; sync up re-creates records deleted on the server.
    case overwrite = "OVERWRITE"
    /// Sync down never touches a dirty entry (or a tree holding one); sync up leaves a record or tree
    /// dirty, as a conflict, when its server copy changed after the local copy or was deleted.
    case leaveIfChanged = "LEAVE_IF_CHANGED"

    /// The mode a sync's `options` name; OVERWRITE when absent, as in Mobile SDK.
    public init(options: JSONObject) {
        self = options["mergeMode"]?.stringValue.flatMap(MergeMode.init(rawValue:)) ?? .overwrite
    }
}
