/// The stage's `strategy` setting: a transport, or `auto`.
public enum SyncUpStrategy: String, Sendable, CaseIterable {
    case auto, collections, composite, graph, bulk, perTree, rest

    /// The transport for a sync up of `records` candidates. `auto` takes Bulk 2.0 for a flat
    /// target at or above `bulkThreshold` records, else the target's own transport (sObject
    /// Collections for parent-children trees: parents, then children, 200 a request).
    /// A target that writes its records itself (``SyncUpRecordWriter``) sends one at a time.
    func transport(for target: any SyncUpTarget, records: Int, bulkThreshold: Int) -> SyncUpTransport {
        if target is any SyncUpRecordWriter { return .rest }
        switch self {
        case .auto:
            if !target.hasChildren && records >= bulkThreshold { return .bulk }
            return target.preferredTransport
        case .collections: return .collections
        case .composite: return .composite
        case .graph: return .graph
        case .bulk: return .bulk
        case .perTree: return .perTree
        case .rest: return .rest
        }
    }
}
