/// A page of a Bulk API 2.0 query job's results (``OrgClient/bulkQuery(_:all:maxRecordsPerPage:pollInterval:)``).
public struct BulkQueryPage: Sendable {
    /// The result file's header: the query's fields as the org names them.
    public var columns: [String]
    /// The page's rows, one cell per column: text as the org wrote it, empty for null.
    public var rows: [[String]]
    /// The job's row count (`numberRecordsProcessed` once complete), or -1 when the org did not say.
    public var totalSize: Int

    public init(columns: [String], rows: [[String]], totalSize: Int) {
        self.columns = columns
        self.rows = rows
        self.totalSize = totalSize
    }
}
