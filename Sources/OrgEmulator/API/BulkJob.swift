import Formats
import JSON

/// A Bulk API 2.0 job: an ingest job (CSV uploaded, processed on UploadComplete) or a query job.
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
    /// Ingest: the CSV files uploaded so far, each with its own header row.
    var uploads: [String] = []
    var header: [String] = []
    var successful: [[String]] = []
    var failed: [[String]] = []
    var unprocessed: [[String]] = []
    /// Ingest: each data row's outcome in input order (Bulk API 1.0 results are per row).
    var rowResults: [RowResult] = []
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

    /// Job info as the API returns it.
    var info: JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        object["operation"] = .string(operation)
        object["object"] = .string(self.object)
        object["createdById"] = .string("0050S0000000001QAA")
        object["createdDate"] = .string(SalesforceTime.format(createdDate))
        object["systemModstamp"] = .string(SalesforceTime.format(systemModstamp))
        object["state"] = .string(state)
        if let externalIdFieldName { object["externalIdFieldName"] = .string(externalIdFieldName) }
        object["concurrencyMode"] = "Parallel"
        object["contentType"] = "CSV"
        object["apiVersion"] = .double(Double(apiVersion) ?? 62)
        object["jobType"] = .string(kind == .ingest ? "V2Ingest" : "V2Query")
        if kind == .ingest { object["contentUrl"] = .string("services/data/v\(apiVersion)/jobs/ingest/\(id)/batches") }
        object["lineEnding"] = .string(lineEnding)
        object["columnDelimiter"] = .string(columnDelimiter)
        if kind == .query { object["query"] = query.map(JSONValue.string) ?? .null }
        let finished = state == "JobComplete" || state == "Failed" || state == "Aborted"
        let processedCount = kind == .ingest ? successful.count + failed.count : resultRows.count
        object["numberRecordsProcessed"] = .integer(Int64(finished ? processedCount : 0))
        object["numberRecordsFailed"] = .integer(Int64(finished ? failed.count : 0))
        object["retries"] = 0
        object["totalProcessingTime"] = 0
        object["apiActiveProcessingTime"] = 0
        object["apexProcessingTime"] = 0
        if let errorMessage { object["errorMessage"] = .string(errorMessage) }
        return .object(object)
    }
}
