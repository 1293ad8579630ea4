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
    public var rows: Rows

    public struct Row: Sendable, Equatable {
        public var processed: Bool
        public var id: String?
        public var created: Bool
        /// `CODE:message:fields --` as the org wrote it.
        public var error: String?
    }

    /// The rows, about 19 bytes each (a job may hold millions): a state byte and an 18-character
    /// id in one buffer; errors and ids of another length apart.
    public struct Rows: RandomAccessCollection, Sendable {
        /// 0 not processed, 1 created, 2 succeeded without creating, 3 failed.
        private var states: [UInt8]
        private var ids: [UInt8]
        private var otherIds: [Int: String] = [:]
        private var errors: [Int: String] = [:]
        private static let idLength = 18

        init(count: Int) {
            states = Array(repeating: 0, count: count)
            ids = Array(repeating: 0, count: count * Self.idLength)
        }

        public var startIndex: Int { 0 }
        public var endIndex: Int { states.count }

        public subscript(position: Int) -> Row {
            let start = position * Self.idLength
            let id = otherIds[position] ?? (ids[start] == 0 ? nil : String(decoding: ids[start..<start + Self.idLength], as: UTF8.self))
            return Row(processed: states[position] != 0, id: id, created: states[position] == 1, error: errors[position])
        }

        mutating func set(_ row: Row, at position: Int) {
            states[position] = !row.processed ? 0 : row.error != nil ? 3 : row.created ? 1 : 2
            errors[position] = row.error
            let start = position * Self.idLength
            if let id = row.id, id.utf8.count == Self.idLength {
                ids.replaceSubrange(start..<start + Self.idLength, with: id.utf8)
                otherIds[position] = nil
            } else {
                for offset in start..<start + Self.idLength { ids[offset] = 0 }
                otherIds[position] = row.id
            }
        }
    }
}

/// A 64-bit FNV-1a hash of a Bulk API row's cells (an absent cell hashes as an empty one).
/// A job's results echo the cells it was given, so a result row finds its input row by this hash
/// without the input rows being kept.
public enum BulkRowHash {
    public static func of(_ cells: [String?]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for cell in cells { mix(cell ?? "", into: &hash) }
        return hash
    }

    public static func of(_ cells: ArraySlice<String>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for cell in cells { mix(cell, into: &hash) }
        return hash
    }

    private static func mix(_ cell: String, into hash: inout UInt64) {
        for byte in cell.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        // 0xFF never occurs in UTF-8: it ends a cell, so ("ab", "c") and ("a", "bc") differ.
        hash = (hash ^ 0xFF) &* 0x100_0000_01b3
    }
}

/// Input rows by hash, each claimed by at most one result row.
struct BulkRowMatcher {
    /// Row positions ordered by hash.
    private let order: [Int32]
    private let sorted: [UInt64]
    /// Per position in `sorted` that starts a run of equal hashes: how many of the run are claimed.
    private var claimed: [Int32]

    init(hashes: [UInt64]) {
        order = hashes.indices.map(Int32.init).sorted { (hashes[Int($0)], $0) < (hashes[Int($1)], $1) }
        sorted = order.map { hashes[Int($0)] }
        claimed = Array(repeating: 0, count: hashes.count)
    }

    /// The first unclaimed input row with this hash.
    mutating func claim(_ hash: UInt64) -> Int? {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < hash { low = middle + 1 } else { high = middle }
        }
        guard low < sorted.count, sorted[low] == hash else { return nil }
        let position = low + Int(claimed[low])
        guard position < sorted.count, sorted[position] == hash else { return nil }
        claimed[low] += 1
        return Int(order[position])
    }
}

extension OrgClient {
    /// Runs a Bulk API 2.0 ingest job: creates it, hands its id to `jobCreated` (to record it
    /// before any data leaves), uploads the rows as CSV (in one upload, as orgs expect, unless
    /// `chunkRows` splits it; each upload with the header), closes it, and waits for its result
    /// (``bulkIngestResult``).
    /// - Parameters:
    ///   - operation: `insert`, `update`, `upsert`, `delete` or `hardDelete`.
    ///   - columns: the CSV header; each row has one value per column (`nil` = empty cell).
    public func bulkIngest(object: String, operation: String, externalIdField: String? = nil, columns: [String],
                           rows: [[String?]], chunkRows: Int = .max, pollInterval: Double = 0.1,
                           jobCreated: @Sendable (String) async throws -> Void = { _ in }) async throws -> BulkIngestResult {
        let jobId = try await createIngestJob(object: object, operation: operation, externalIdField: externalIdField)
        try await jobCreated(jobId)
        let lines = rows.map { CSVLine.encode($0.map { $0 ?? "" }) }
        let header = CSVLine.encode(columns)
        var uploads: [[UInt8]] = []
        for start in stride(from: 0, to: lines.count, by: max(1, chunkRows)) {
            uploads.append(Array(([header] + lines[start..<min(lines.count, start + chunkRows)]).map { $0 + "\n" }.joined().utf8))
        }
        try await uploadAndCloseIngestJob(jobId, uploads: uploads)
        return try await bulkIngestResult(jobId: jobId, rows: rows, pollInterval: pollInterval)
    }

    /// Creates an ingest job (CSV, LF line endings, comma delimiter) and returns its id. A job is
    /// created `Open` and does nothing until its data is uploaded and it is closed, so creating it
    /// again after a lost answer is harmless.
    public func createIngestJob(object: String, operation: String, externalIdField: String? = nil) async throws -> String {
        var job: JSONObject = ["object": .string(object), "operation": .string(operation), "contentType": "CSV", "lineEnding": "LF",
                               "columnDelimiter": "COMMA"]
        if let externalIdField { job["externalIdFieldName"] = .string(externalIdField) }
        let created = try await send(.json("POST", apiPath + "/jobs/ingest", .object(job), kind: "bulk", idempotent: true)).json()
        guard let jobId = created["id"]?.stringValue else { throw OrgClientError.invalidResponse("Bulk ingest: no job id in the answer") }
        return jobId
    }

    /// Uploads a job's data (each upload a CSV with its header line; an org takes one upload of
    /// up to 150 MB base64 per job) and closes it (`UploadComplete`), so the org processes it.
    public func uploadAndCloseIngestJob(_ jobId: String, uploads: [[UInt8]]) async throws {
        let jobPath = apiPath + "/jobs/ingest/\(jobId)"
        for upload in uploads {
            // Never sent twice: an org may take a second upload as more rows.
            _ = try await send(OrgRequest(method: "PUT", path: jobPath + "/batches", headers: [("Content-Type", "text/csv")], body: upload,
                                          kind: "bulk", idempotent: false))
        }
        _ = try await send(.json("PATCH", jobPath, ["state": "UploadComplete"], kind: "bulk"))
    }

    /// The outcome of an ingest job, mapped back to the rows it was given (the same cells, in any
    /// order): waits with backoff until the job ends; a job still `Open` (its upload never
    /// finished) is aborted, so none of its rows is processed. A resumed run reads a job an
    /// earlier one started this way instead of sending its rows again.
    public func bulkIngestResult(jobId: String, rows: [[String?]], pollInterval: Double = 0.1) async throws -> BulkIngestResult {
        try await bulkIngestResult(jobId: jobId, rowCount: rows.count, pollInterval: pollInterval) { _ in rows.map(BulkRowHash.of) }
    }

    /// ``bulkIngestResult(jobId:rows:pollInterval:)`` for a job whose columns are known only to
    /// the org: `rows` builds the input rows under the columns its result files name (a resumed
    /// run rebuilding a job's rows from what it journaled).
    public func bulkIngestResult(jobId: String, rowCount: Int, rows: @Sendable ([String]) -> [[String?]],
                                 pollInterval: Double = 0.1) async throws -> BulkIngestResult {
        try await bulkIngestResult(jobId: jobId, rowCount: rowCount, pollInterval: pollInterval) { rows($0).map(BulkRowHash.of) }
    }

    /// ``bulkIngestResult(jobId:rows:pollInterval:)`` with each input row given by its
    /// ``BulkRowHash`` only, so a large job's rows need not be kept while it runs. The result
    /// files are read row by row from the answer's bytes.
    public func bulkIngestResult(jobId: String, rowHashes: [UInt64], pollInterval: Double = 0.1) async throws -> BulkIngestResult {
        try await bulkIngestResult(jobId: jobId, rowCount: rowHashes.count, pollInterval: pollInterval) { _ in rowHashes }
    }

    /// Waits for the job, then matches its result rows to the input rows, whose hashes
    /// `hashes` gives under the columns of the job's result files.
    private func bulkIngestResult(jobId: String, rowCount: Int, pollInterval: Double,
                                  hashes: ([String]) -> [UInt64]) async throws -> BulkIngestResult {
        let jobPath = apiPath + "/jobs/ingest/\(jobId)"
        var info = try await send(OrgRequest(method: "GET", path: jobPath, kind: "bulkStatus")).json()
        if info["state"]?.stringValue == "Open" {
            info = try await send(.json("PATCH", jobPath, ["state": "Aborted"], kind: "bulk")).json()
        }
        // Polls back off (doubling up to 10 s); once the org reports progress, a poll comes sooner
        // when, at the rate seen, the job's last row should be done before the backoff's.
        var backoff = pollInterval
        var firstProgress: (at: ContinuousClock.Instant, processed: Int)?
        while !["JobComplete", "Failed", "Aborted"].contains(info["state"]?.stringValue ?? "") {
            var wait = backoff
            let processed = info["numberRecordsProcessed"]?.integerValue.map(Int.init) ?? 0
            if let first = firstProgress, processed > first.processed, rowCount > processed {
                let elapsed = ContinuousClock.now - first.at
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let remaining = Double(rowCount - processed) * seconds / Double(processed - first.processed)
                wait = min(backoff, max(pollInterval, remaining))
            } else if processed > 0 && firstProgress == nil {
                firstProgress = (ContinuousClock.now, processed)
            }
            try await Task.sleep(for: .seconds(wait))
            backoff = min(backoff * 2, 10)
            info = try await send(OrgRequest(method: "GET", path: jobPath, kind: "bulkStatus")).json()
        }
        var result = BulkIngestResult(jobId: jobId, state: info["state"]?.stringValue ?? "", errorMessage: info["errorMessage"]?.stringValue,
                                      rows: BulkIngestResult.Rows(count: rowCount))
        guard rowCount > 0 else { return result }
        var matcher: BulkRowMatcher?
        // A result file the job's counts say is empty is not asked for.
        let processed = info["numberRecordsProcessed"]?.integerValue
        let failed = info["numberRecordsFailed"]?.integerValue
        let files = [("successfulResults", processed == nil || failed == nil || processed! > failed!), ("failedResults", failed != 0)]
        for (kind, wanted) in files where wanted {
            let extra = 2
            let body = try await send(OrgRequest(method: "GET", path: jobPath + "/" + kind, kind: "bulk")).body
            var first = true
            for row in CSVReader(bytes: body) {
                guard case .fields(let cells, _) = row else {
                    if case .malformed(let reason, let line, _) = row {
                        throw OrgClientError.invalidResponse("Bulk API \(kind): the CSV answer cannot be read (line \(line): \(reason))")
                    }
                    continue
                }
                if first {
                    // The header: `sf__Id`, `sf__Created` or `sf__Error`, then the job's columns.
                    first = false
                    if matcher == nil { matcher = BulkRowMatcher(hashes: hashes(Array(cells.dropFirst(extra)))) }
                    continue
                }
                guard cells.count >= extra, let index = matcher?.claim(BulkRowHash.of(cells.dropFirst(extra))) else { continue }
                result.rows.set(kind == "successfulResults"
                    ? .init(processed: true, id: cells[0].isEmpty ? nil : cells[0], created: cells[1] == "true", error: nil)
                    : .init(processed: true, id: cells[0].isEmpty ? nil : cells[0], created: false, error: cells[1]), at: index)
            }
        }
        return result
    }

    /// Runs a Bulk API 2.0 query job and streams its results a page at a time (up to
    /// `maxRecordsPerPage` rows, following `Sforce-Locator`): the next page is fetched while the
    /// consumer handles the one before. Status polls back off from `pollInterval`, doubling up
    /// to 10 s.
    public func bulkQuery(_ soql: String, all: Bool = false, maxRecordsPerPage: Int = 50_000, pollInterval: Double = 0.1)
        -> ProducedSequence<BulkQueryPage>
    {
        ProducedSequence { yield in
            // Creating a query job twice is harmless (it only reads), so a lost answer may be retried.
            let created = try await send(.json("POST", apiPath + "/jobs/query", ["operation": .string(all ? "queryAll" : "query"), "query": .string(soql)],
                                               kind: "bulk", idempotent: true)).json()
            guard let jobId = created["id"]?.stringValue else { throw OrgClientError.invalidResponse("Bulk query: no job id in the answer") }
            let jobPath = apiPath + "/jobs/query/\(jobId)"
            var wait = pollInterval
            var info: JSONValue
            while true {
                info = try await send(OrgRequest(method: "GET", path: jobPath, kind: "bulkStatus")).json()
                let state = info["state"]?.stringValue ?? ""
                if state == "JobComplete" { break }
                if state == "Failed" || state == "Aborted" {
                    throw OrgAPIError(status: 400, errorCode: "BULK_QUERY_\(state.uppercased())", message: info["errorMessage"]?.stringValue ?? state)
                }
                try await Task.sleep(for: .seconds(wait))
                wait = min(wait * 2, 10)
            }
            let total = info["numberRecordsProcessed"]?.integerValue.map(Int.init)
            var locator: String?
            var sent = 0
            repeat {
                var query = [("maxRecords", String(maxRecordsPerPage))]
                if let locator { query.append(("locator", locator)) }
                let answer = try await send(OrgRequest(method: "GET", path: jobPath + "/results", query: query, kind: "bulk"))
                var page = BulkQueryPage(columns: [], rows: [], totalSize: 0)
                for row in CSVReader(bytes: answer.body) {
                    switch row {
                    case .fields(let cells, _) where page.columns.isEmpty: page.columns = cells
                    case .fields(let cells, _): page.rows.append(cells)
                    case .malformed(let reason, let line, _):
                        throw OrgClientError.invalidResponse("Bulk API results: the CSV answer cannot be read (line \(line): \(reason))")
                    }
                }
                let next = answer.headers["sforce-locator"] ?? "null"
                locator = next == "null" || next.isEmpty ? nil : next
                sent += page.rows.count
                page.totalSize = total.map { max($0, sent) } ?? -1
                if !page.rows.isEmpty || locator == nil { try await yield(page) }
            } while locator != nil
        }
    }
}
