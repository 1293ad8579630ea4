import Formats
import JSON

/// A Bulk API 2.0 job: an ingest job (CSV uploaded, processed in the background once closed) or
/// a query job.
struct BulkJob: Sendable {
    enum Kind: String, Sendable {
        case ingest, query
    }

    var id: String
    var kind: Kind
    var operation: String
    var object: String
    var externalIdFieldName: String?
    var state: String
    var columnDelimiter: String
    var lineEnding: String
    var createdDate: Int64
    var systemModstamp: Int64
    var apiVersion: String
    var createdById = "0050S0000000001QAA"
    /// Ingest: the CSV files uploaded so far, each with its own header row.
    var uploads: [String] = []
    var header: [String] = []
    var successful: [[String]] = []
    var failed: [[String]] = []
    var unprocessed: [[String]] = []
    /// Ingest: each data row's outcome in input order (Bulk API 1.0 results are per row).
    var rowResults: [RowResult] = []
    /// Ingest: the parsed rows while the job is `InProgress`, and the next one to process.
    var pending: [[String]] = []
    var nextRow = 0
    /// Ingest: the org's CPU time spent on the job so far, in milliseconds.
    var processingMs: Int64 = 0
    var errorMessage: String?
    /// Query: the SOQL and its result rows.
    var query: String?
    var resultHeader: [String] = []
    var resultRows: [[String]] = []

    var delimiter: Character { Self.delimiter(named: columnDelimiter) ?? "," }

    /// One ingested row: its record id, whether it was created, and the org's error.
    struct RowResult: Sendable {
        var id: String
        var created: Bool
        var error: APIError?
    }

    /// The delimiter characters Bulk API 2.0 names.
    static func delimiter(named name: String) -> Character? {
        ["COMMA": ",", "TAB": "\t", "PIPE": "|", "SEMICOLON": ";", "CARET": "^", "BACKQUOTE": "`"][name]
    }
    var newline: String { lineEnding == "CRLF" ? "\r\n" : "\n" }

    /// Job info as the API returns it: on a query job's create, the twelve keys an org answers
    /// with; otherwise with the processing figures (an ingest job's rise while it runs).
    func info(created: Bool = false) -> JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        object["operation"] = .string(operation)
        object["object"] = .string(self.object)
        object["createdById"] = .string(createdById)
        object["createdDate"] = .string(SalesforceTime.format(createdDate))
        object["systemModstamp"] = .string(SalesforceTime.format(systemModstamp))
        object["state"] = .string(state)
        if let externalIdFieldName { object["externalIdFieldName"] = .string(externalIdFieldName) }
        object["concurrencyMode"] = "Parallel"
        object["contentType"] = "CSV"
        object["apiVersion"] = .double(Double(apiVersion) ?? 62)
        if kind == .query && created {
            object["lineEnding"] = .string(lineEnding)
            object["columnDelimiter"] = .string(columnDelimiter)
            return .object(object)
        }
        object["jobType"] = .string(kind == .ingest ? "V2Ingest" : "V2Query")
        if kind == .ingest { object["contentUrl"] = .string("services/data/v\(apiVersion)/jobs/ingest/\(id)/batches") }
        object["lineEnding"] = .string(lineEnding)
        object["columnDelimiter"] = .string(columnDelimiter)
        if kind == .query {
            object["numberRecordsProcessed"] = .integer(Int64(state == "JobComplete" ? resultRows.count : 0))
            object["retries"] = 0
            object["totalProcessingTime"] = 0
            object["isPkChunkingSupported"] = true
        } else {
            object["numberRecordsProcessed"] = .integer(Int64(successful.count + failed.count))
            object["numberRecordsFailed"] = .integer(Int64(failed.count))
            object["retries"] = 0
            object["totalProcessingTime"] = .integer(processingMs)
            object["apiActiveProcessingTime"] = .integer(processingMs)
            object["apexProcessingTime"] = 0
        }
        if let errorMessage { object["errorMessage"] = .string(errorMessage) }
        return .object(object)
    }

    /// The rows of an ingest job's uploads (each a CSV file with its own header row, all with the
    /// same columns), or why the job fails.
    static func parse(uploads: [String], delimiter: Character) -> Result<(header: [String], rows: [[String]]), ParseFailure> {
        var rows: [[String]] = []
        var header: [String] = []
        for (offset, upload) in uploads.enumerated() {
            let parsed: [[String]]
            do {
                parsed = try CSVReader.rows(of: upload, delimiter: delimiter)
            } catch {
                return .failure(ParseFailure(message: "InvalidBatch : Failed to parse CSV upload \(offset + 1). Line \(error.line): \(error.reason)"))
            }
            guard let uploadHeader = parsed.first else { continue }
            if header.isEmpty { header = uploadHeader }
            guard uploadHeader == header else {
                return .failure(ParseFailure(message: "InvalidBatch : upload \(offset + 1) has different columns from the first upload"))
            }
            rows += parsed.dropFirst().filter { !($0.count == 1 && $0[0].isEmpty) }
        }
        guard !header.isEmpty else { return .failure(ParseFailure(message: "InvalidBatch : No content")) }
        return .success((header, rows))
    }

    /// Why an ingest job's uploads cannot be processed.
    struct ParseFailure: Error {
        var message: String
    }
}
