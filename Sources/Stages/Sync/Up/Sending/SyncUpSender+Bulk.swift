import Connectors
import Formats
import JSON
import Soups

/// Writes sent through Bulk API 2.0 ingest jobs, and each result row read back as an outcome.
extension SyncUpSender {
    func sendBulk(_ object: String, _ kind: SyncUpOperation.Kind, _ field: String?, _ operations: [SyncUpOperation],
                  journalIds: [Int64]) async throws -> [RecordKey: SyncUpOutcome] {
        let table = SyncUpBulkTable(kind: kind, externalIdField: field,
                                    records: operations.map { ($0.fields, $0.recordId, $0.externalIdValue) })
        let (columns, rows) = (table.columns, table.rows)
        let operationName = kind == .create ? "insert" : kind.rawValue
        let store = store
        let started = Shared(false)
        let result: BulkIngestResult
        do {
            result = try await client.bulkIngest(object: object, operation: operationName, externalIdField: kind == .upsert ? field : nil,
                                                 columns: columns, rows: rows) { jobId in
                try await store.journal.setBulkJob(jobId, forJournalIds: journalIds)
                started.value = true
            }
        } catch let error as OrgClientError where started.value {
            // The job exists and may have run: the next run reads its results.
            let outcomes = Dictionary(uniqueKeysWithValues: operations.map { ($0.key, SyncUpOutcome.uncertain("Bulk job: \(error)")) })
            if case .requestLimitExceeded = error { throw Stopped(outcomes: outcomes, cause: error) }
            return outcomes
        } catch let error as OrgAPIError where started.value {
            return Dictionary(uniqueKeysWithValues: operations.map { ($0.key, .uncertain("Bulk job: \(error.description)")) })
        }
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for (operation, row) in zip(operations, result.rows) {
            outcomes[operation.key] = Self.bulkOutcome(row, of: operation, in: result)
        }
        return outcomes
    }

    /// A record's outcome from its row of a Bulk job's results.
    static func bulkOutcome(_ row: BulkIngestResult.Row, of operation: SyncUpOperation, in result: BulkIngestResult) -> SyncUpOutcome {
        bulkOutcome(row, kind: operation.kind, recordId: operation.recordId, in: result)
    }

    /// ``bulkOutcome(_:of:in:)`` of an operation known by its kind and record id.
    static func bulkOutcome(_ row: BulkIngestResult.Row, kind: SyncUpOperation.Kind, recordId: String?, in result: BulkIngestResult) -> SyncUpOutcome {
        // A job that completed processed every row: one its results do not account for may have been applied.
        if !row.processed && result.state == "JobComplete" {
            return .uncertain("Bulk job \(result.jobId) completed, but its results have no row matching this record's")
        }
        if !row.processed {
            return .failed(SyncUpError(status: 0, code: "NOT_PROCESSED",
                message: "Bulk job \(result.jobId) ended \(result.state) before processing this record\(result.errorMessage.map { ": \($0)" } ?? "")"))
        }
        if let error = row.error { return .failed(SyncUpError(bulkError: error)) }
        let id = row.id ?? recordId
        return kind == .upsert && !row.created ? .matched(id: id) : .succeeded(id: id)
    }
}
