import Foundation
import Formats
import JSON

/// The outcome of a Bulk API 2.0 ingest job, mapped back to the input rows.
public struct BulkIngestResult: Sendable {
    public var jobId: String
    /// `JobComplete`, `Failed` or `Aborted`.
    public var state: String
    public var errorMessage: String?
    /// Per input row (same order): the record id, whether it was created, and the error, if any.
    /// A row the org never processed has `processed == false`.
    public var rows: [Row]

    public struct Row: Sendable, Equatable {
        public var processed: Bool
        public var id: String?
        public var created: Bool
        /// `CODE:message:fields --` as the org wrote it.
        public var error: String?
    }
}

extension OrgClient {
    /// Runs a Bulk API 2.0 ingest job: creates it, hands its id to `jobCreated` (to record it
    /// before any data leaves), uploads the rows as CSV in chunks of at most `chunkRows` (each
    /// chunk with the header), closes it, and waits for its result (``bulkIngestResult``).
    /// - Parameters:
    ///   - operation: `insert`, `update`, `upsert`, `delete` or `hardDelete`.
    ///   - columns: the CSV header; each row has one value per column (`nil` = empty cell).
    public func bulkIngest(object: String, operation: String, externalIdField: String? = nil, columns: [String],
                           rows: [[String?]], chunkRows: Int = 10_000, pollInterval: Double = 0.1,
                           jobCreated: @Sendable (String) async throws -> Void = { _ in }) async throws -> BulkIngestResult {
        var job: JSONObject = ["object": .string(object), "operation": .string(operation), "contentType": "CSV", "lineEnding": "LF",
                               "columnDelimiter": "COMMA"]
        if let externalIdField { job["externalIdFieldName"] = .string(externalIdField) }
        // A job is created Open and does nothing until its data is uploaded and it is closed, so
        // creating it again after a lost answer is harmless.
        let created = try await send(.json("POST", apiPath + "/jobs/ingest", .object(job), kind: "bulk", idempotent: true)).json()
        guard let jobId = created["id"]?.stringValue else { throw OrgClientError.invalidResponse("Bulk ingest: no job id in the answer") }
        try await jobCreated(jobId)
        let jobPath = apiPath + "/jobs/ingest/\(jobId)"
        let lines = rows.map { CSVLine.encode($0.map { $0 ?? "" }) }
        let header = CSVLine.encode(columns)
        for start in stride(from: 0, to: lines.count, by: max(1, chunkRows)) {
            let chunk = ([header] + lines[start..<min(lines.count, start + chunkRows)]).map { $0 + "\n" }.joined()
            _ = try await send(OrgRequest(method: "PUT", path: jobPath + "/batches", headers: [("Content-Type", "text/csv")],
                                          body: Array(chunk.utf8), kind: "bulk"))
        }
        _ = try await send(.json("PATCH", jobPath, ["state": "UploadComplete"], kind: "bulk"))
        return try await bulkIngestResult(jobId: jobId, rows: rows, pollInterval: pollInterval)
    }

    /// The outcome of an ingest job, mapped back to the rows it was given (the same cells, in any
    /// order): waits with backoff until the job ends; a job still `Open` (its upload never
    /// finished) is aborted, so none of its rows is processed. A resumed run reads a job an
    /// earlier one started this way instead of sending its rows again.
    public func bulkIngestResult(jobId: String, rows: [[String?]], pollInterval: Double = 0.1) async throws -> BulkIngestResult {
        let jobPath = apiPath + "/jobs/ingest/\(jobId)"
        var info = try await send(OrgRequest(method: "GET", path: jobPath, kind: "bulk")).json()
        if info["state"]?.stringValue == "Open" {
            info = try await send(.json("PATCH", jobPath, ["state": "Aborted"], kind: "bulk")).json()
        }
        var wait = pollInterval
        while !["JobComplete", "Failed", "Aborted"].contains(info["state"]?.stringValue ?? "") {
            try await Task.sleep(for: .seconds(wait))
            wait = min(wait * 2, 10)
            info = try await send(OrgRequest(method: "GET", path: jobPath, kind: "bulk")).json()
        }
        var result = BulkIngestResult(jobId: jobId, state: info["state"]?.stringValue ?? "", errorMessage: info["errorMessage"]?.stringValue,
                                      rows: Array(repeating: .init(processed: false, id: nil, created: false, error: nil), count: rows.count))
        // Results echo the uploaded cells: match each result row to an unclaimed input row with the same cells.
        var positions: [String: [Int]] = [:]
        for (index, row) in rows.enumerated() { positions[CSVLine.encode(row.map { $0 ?? "" }), default: []].append(index) }
        func claim(_ cells: ArraySlice<String>) -> Int? {
            let key = CSVLine.encode(Array(cells))
            guard var list = positions[key], !list.isEmpty else { return nil }
            let index = list.removeFirst()
            positions[key] = list
            return index
        }
        for (kind, extra) in [("successfulResults", 2), ("failedResults", 2)] {
            let text = try await send(OrgRequest(method: "GET", path: jobPath + "/" + kind, kind: "bulk")).text
            for cells in try Self.csvRows(text, of: kind).dropFirst() where cells.count >= extra {
                guard let index = claim(cells.dropFirst(extra)) else { continue }
                result.rows[index] = kind == "successfulResults"
                    ? .init(processed: true, id: cells[0].isEmpty ? nil : cells[0], created: cells[1] == "true", error: nil)
                    : .init(processed: true, id: cells[0].isEmpty ? nil : cells[0], created: false, error: cells[1])
            }
        }
        return result
    }

    /// Runs a Bulk API 2.0 query job and streams its rows (column name → value), a results page
    /// at a time, following `Sforce-Locator`.
    public func bulkQuery(_ soql: String, all: Bool = false, maxRecordsPerPage: Int = 50_000, pollInterval: Double = 0.5)
        -> ProducedSequence<[String: String]>
    {
        ProducedSequence { yield in
            // Creating a query job twice is harmless (it only reads), so a lost answer may be retried.
            let created = try await send(.json("POST", apiPath + "/jobs/query", ["operation": .string(all ? "queryAll" : "query"), "query": .string(soql)],
                                               kind: "bulk", idempotent: true)).json()
            guard let jobId = created["id"]?.stringValue else { throw OrgClientError.invalidResponse("Bulk query: no job id in the answer") }
            let jobPath = apiPath + "/jobs/query/\(jobId)"
            var wait = pollInterval
            while true {
                let info = try await send(OrgRequest(method: "GET", path: jobPath, kind: "bulk")).json()
                let state = info["state"]?.stringValue ?? ""
                if state == "JobComplete" { break }
                if state == "Failed" || state == "Aborted" {
                    throw OrgAPIError(status: 400, errorCode: "BULK_QUERY_\(state.uppercased())", message: info["errorMessage"]?.stringValue ?? state)
                }
                try await Task.sleep(for: .seconds(wait))
                wait = min(wait * 2, 10)
            }
            var locator: String?
            repeat {
                var query = [("maxRecords", String(maxRecordsPerPage))]
                if let locator { query.append(("locator", locator)) }
                let page = try await send(OrgRequest(method: "GET", path: jobPath + "/results", query: query, kind: "bulk"))
                let rows = try Self.csvRows(page.text, of: "results")
                if let header = rows.first {
                    for cells in rows.dropFirst() {
                        var row: [String: String] = [:]
                        for (name, value) in zip(header, cells) { row[name] = value }
                        try await yield(row)
                    }
                }
                let next = page.headers["sforce-locator"] ?? "null"
                locator = next == "null" || next.isEmpty ? nil : next
            } while locator != nil
        }
    }

    /// The rows of a Bulk API CSV answer; one that cannot be read is an invalid response.
    static func csvRows(_ text: String, of what: String) throws -> [[String]] {
        do {
            return try CSVReader.rows(of: text)
        } catch {
            throw OrgClientError.invalidResponse("Bulk API \(what): the CSV answer cannot be read (\(error))")
        }
    }
}
