/// How a sync up packs its writes into requests.
public enum SyncUpTransport: String, Sendable, CaseIterable {
    /// One REST request per record (Mobile Sync's plain sync-up target).
    case rest
    /// Many trees per Composite request (25 subrequests each), children referring to a new parent
    /// by reference; a tree of more than 25 subrequests is split, its later parts sent once the
    /// parent's id is known.
    case composite
    /// sObject Collections, 200 records a request: parents, then children, then parent deletes.
    case collections
    /// Composite Graph: one graph per tree (all or nothing), up to 500 nodes and 75 graphs a request.
    case graph
    /// Bulk API 2.0 ingest jobs (flat targets).
    case bulk
    /// One Composite request per tree, one tree at a time, as Mobile SDK does; kept for comparison.
    case perTree
}
