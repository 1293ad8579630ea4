import Formats

/// The Bulk jobs the org knows — API 2.0 ingest and query jobs, API 1.0 jobs and their batches —
/// and the ids they get (`750…` for jobs, `751…` for 1.0 batches, from one counter as in an org).
struct BulkJobRegistry: Sendable {
    /// Bulk API 2.0 jobs by id.
    var v2: [String: BulkJob] = [:]
    /// Bulk API 1.0 jobs by id.
    var v1: [String: OrgEngine.BulkV1Job] = [:]
    private var counter: Int64 = 0

    /// A new id with `prefix`.
    mutating func newId(prefix: String) -> String {
        counter += 1
        return SalesforceId.make(prefix: prefix, counter: counter)
    }

    /// Forgets every job (the org was reset).
    mutating func removeAll() {
        v2 = [:]
        v1 = [:]
    }
}
