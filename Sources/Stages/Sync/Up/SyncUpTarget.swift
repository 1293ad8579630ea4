import Soups

/// Where a sync up finds its records and how they map to org objects. The built-in targets are
/// ``SoupSyncUpTarget`` (one soup: Mobile Sync's REST, batch and collection targets) and
/// ``ParentChildrenSyncUpTarget``; conform a type to add another.
public protocol SyncUpTarget: Sendable {
    /// The transport to use when the stage's `strategy` is `auto` and Bulk does not apply.
    var preferredTransport: SyncUpTransport { get }

    /// `true` when trees have children (Bulk ingest does not apply then).
    var hasChildren: Bool { get }

    /// The `_soupEntryId`s of the trees to sync up (for a parent-children target, of the parents
    /// that are dirty or have a dirty child), in ascending order.
    func candidateIds(in store: SoupStore) async throws -> [Int64]

    /// Loads the trees of the given candidates, in the order given; ids no longer found are left out.
    func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree]
}
