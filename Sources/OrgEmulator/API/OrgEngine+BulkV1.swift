import Foundation
import Formats
import JSON
import SOQL

/// Bulk API 1.0 (`/services/async/NN.N/job…`), as Data Loader, simple-salesforce's `sf.bulk`,
/// CumulusCI and amaxa use it: jobs in XML or JSON (`jobInfo`), batches of CSV or JSON records
/// (or a SOQL query), batch results per row, query results by result id; the session in
/// `X-SFDC-Session`. Batches run on the same ingest engine as Bulk API 2.0, as soon as they
/// arrive, so a client polling a batch finds it `Completed`.
extension OrgEngine {
    /// A Bulk 1.0 job: its batches and how it speaks (XML or JSON).
    struct BulkV1Job: Sendable {
        var id: String
        var operation: String
        var object: String
        var externalIdFieldName: String?
        var contentType: String
        var state = "Open"
        var createdDate: Int64
        var systemModstamp: Int64
        var apiVersion: String
        var batches: [BulkV1Batch] = []
    }

    struct BulkV1Batch: Sendable {
        var id: String
        var state: String
        var stateMessage: String?
        var createdDate: Int64
        var request: Data
        var results: [BulkJob.RowResult] = []
        /// Query batches: the result's id and its records (JSON) and CSV.
        var queryRecords: [JSONValue] = []
        var queryCSV = ""
        var failed: Int { results.filter { $0.error != nil }.count }
        var processed: Int { results.count + queryRecords.count }
    }

    static let asyncNamespace = "http://www.force.com/2009/06/asyncapi/dataload"

    /// Answers `/services/async/{version}/…`; `parts` follow the version.
    func bulkV1(_ request: EmulatorRequest, version: String, parts: [String]) -> EmulatorResponse {
        let json = (request.headers["content-type"] ?? "").lowercased().contains("json")
        guard let session = request.headers["x-sfdc-session"] ?? Self.token(of: request), sessions.user(of: session) != nil else {
            return Self.asyncError(400, "InvalidSessionId", "Invalid session id", json: json)
        }
        do {
            return try routeBulkV1(request, version: version, parts: parts, json: json)
        } catch {
            return Self.asyncError(error.status == 404 ? 404 : 400, error.errorCode, error.message, json: json)
        }
    }

    private func routeBulkV1(_ request: EmulatorRequest, version: String, parts: [String], json: Bool) throws(APIError) -> EmulatorResponse {
        guard parts.first == "job" else { throw APIError(404, "InvalidUrl", "Unknown resource") }
        if request.method == "POST" && parts.count == 1 { return try createV1Job(request, version: version, json: json) }
        guard parts.count >= 2, var job = jobs.v1[parts[1]] else { throw APIError(400, "InvalidJob", "Invalid job id: \(parts.count > 1 ? parts[1] : "")") }
        let speaksJSON = job.contentType == "JSON"
        switch (request.method, parts.count) {
        case ("GET", 2):
            return Self.asyncDocument(jobInfo(job), root: "jobInfo", json: speaksJSON)
        case ("POST", 2):
            let body = try Self.asyncFields(request.body, json: json)
            guard let state = body["state"] else { throw APIError(400, "InvalidJob", "state is required") }
            guard job.state == "Open", state == "Closed" || state == "Aborted" else {
                throw APIError(400, "InvalidJobState", "Job \(job.id) is \(job.state); it cannot become \(state)")
            }
            job.state = state
            job.systemModstamp = clock.now()
            jobs.v1[job.id] = job
            return Self.asyncDocument(jobInfo(job), root: "jobInfo", json: speaksJSON)
        case ("POST", 3) where parts[2] == "batch":
            guard job.state == "Open" else { throw APIError(400, "InvalidJobState", "Job \(job.id) is \(job.state): no batch can be added") }
            var batch = BulkV1Batch(id: jobs.newId(prefix: "751"), state: "Completed", createdDate: clock.now(),
                                    request: request.body)
            runV1Batch(&batch, job: job)
            job.batches.append(batch)
            jobs.v1[job.id] = job
            return Self.asyncDocument(batchInfo(batch, job: job), root: "batchInfo", json: speaksJSON, status: 201)
        case ("GET", 3) where parts[2] == "batch":
            let list: JSONValue = .array(job.batches.map { batchInfo($0, job: job) })
            if speaksJSON { return Self.asyncJSON(200, ["batchInfo": list]) }
            return .text(200, Self.xml(["batchInfo": list], root: "batchInfoList"), contentType: "application/xml")
        default:
            break
        }
        guard parts.count >= 4, parts[2] == "batch", let batch = job.batches.first(where: { $0.id == parts[3] }) else {
            throw APIError(400, "InvalidBatch", "Invalid batch id: \(parts.count > 3 ? parts[3] : "")")
        }
        switch (request.method, parts.count, parts.count > 4 ? parts[4] : "") {
        case ("GET", 4, _):
            return Self.asyncDocument(batchInfo(batch, job: job), root: "batchInfo", json: speaksJSON)
        case ("GET", 5, "request"):
            return .text(200, String(decoding: batch.request, as: UTF8.self), contentType: speaksJSON ? "application/json" : "text/csv")
        case ("GET", 5, "result") where job.operation == "query" || job.operation == "queryAll":
            let resultId = batch.id.replacingOccurrences(of: "751", with: "752")
            if speaksJSON { return Self.asyncJSON(200, [.string(resultId)]) }
            return .text(200, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><result-list xmlns=\"\(Self.asyncNamespace)\"><result>\(resultId)</result></result-list>",
                         contentType: "application/xml")
        case ("GET", 6, "result") where job.operation == "query" || job.operation == "queryAll":
            if speaksJSON { return Self.asyncJSON(200, .array(batch.queryRecords)) }
            return .text(200, batch.queryCSV, contentType: "text/csv")
        case ("GET", 5, "result"):
            if speaksJSON {
                return Self.asyncJSON(200, .array(batch.results.map { result in
                    ["success": .bool(result.error == nil), "created": .bool(result.created), "id": result.id.isEmpty ? .null : .string(result.id),
                     "errors": .array(result.error.map { error in
                         [["statusCode": .string(error.errorCode), "message": .string(error.message),
                           "fields": .array((error.fields ?? []).map(JSONValue.string))]]
                     } ?? [])]
                }))
            }
            var text = "\"Id\",\"Success\",\"Created\",\"Error\"\n"
            for result in batch.results {
                let error = result.error.map { "\($0.errorCode):\($0.message)" + (($0.fields ?? []).isEmpty ? "" : ":" + ($0.fields ?? []).joined(separator: ",")) + " --" } ?? ""
                text += CSVLine.encode([result.id, result.error == nil ? "true" : "false", result.created ? "true" : "false", error], quoteAll: true) + "\n"
            }
            return .text(200, text, contentType: "text/csv")
        default:
            throw APIError(404, "InvalidUrl", "Unknown resource")
        }
    }

    private func createV1Job(_ request: EmulatorRequest, version: String, json: Bool) throws(APIError) -> EmulatorResponse {
        let body = try Self.asyncFields(request.body, json: json)
        guard let objectName = body["object"] else { throw APIError(400, "InvalidJob", "object is required") }
        let object = try object(named: objectName)
        let operations = Self.ingestOperations + ["query", "queryAll"]
        guard let operation = body["operation"], operations.contains(operation) else {
            throw APIError(400, "InvalidJob", "operation must be one of \(operations.joined(separator: ", "))")
        }
        let contentType = body["contentType"] ?? "XML"
        guard ["CSV", "JSON"].contains(contentType) else {
            throw APIError(400, "InvalidJob", "contentType \(contentType) is not supported by this emulator; use CSV or JSON")
        }
        if operation == "upsert" && body["externalIdFieldName"] == nil {
            throw APIError(400, "InvalidJob", "External ID was blank for \(object.name). An External ID must be specified for upsert.")
        }
        let now = clock.now()
        let job = BulkV1Job(id: jobs.newId(prefix: "750"), operation: operation, object: object.name,
                            externalIdFieldName: body["externalIdFieldName"], contentType: contentType, createdDate: now,
                            systemModstamp: now, apiVersion: version)
        jobs.v1[job.id] = job
        return Self.asyncDocument(jobInfo(job), root: "jobInfo", json: json, status: 201)
    }

    /// Runs one batch: a query, or records (CSV, or a JSON array turned into CSV) through the
    /// Bulk ingest engine.
    private func runV1Batch(_ batch: inout BulkV1Batch, job: BulkV1Job) {
        let text = String(decoding: batch.request, as: UTF8.self)
        if job.operation == "query" || job.operation == "queryAll" {
            do {
                let plan = try QueryPlan(query: try SOQL.parseQuery(text), text: text, schema: schema)
                let (_, views) = try matchingRecords(plan, includeDeleted: job.operation == "queryAll", parentIds: nil, in: nil)
                let paths = plan.query.select.compactMap(\.fieldPath)
                var csv = CSVLine.encode(paths.map(\.description), quoteAll: true) + "\n"
                for view in views {
                    csv += CSVLine.encode(paths.map { Self.csvValue(SOQLEvaluator.nestedValue(in: view, at: $0)) }, quoteAll: true) + "\n"
                    var record: JSONObject = ["attributes": ["type": .string(plan.object.name)]]
                    for path in paths { record[path.description] = SOQLEvaluator.nestedValue(in: view, at: path) ?? .null }
                    if let id = view["Id"]?.stringValue {
                        record["attributes"] = ["type": .string(plan.object.name), "url": .string("/services/data/v\(job.apiVersion)/sobjects/\(plan.object.name)/\(id)")]
                    }
                    batch.queryRecords.append(.object(record))
                }
                batch.queryCSV = csv
            } catch let error as APIError {
                batch.state = "Failed"
                batch.stateMessage = "InvalidBatch : \(error.message)"
            } catch {
                batch.state = "Failed"
                batch.stateMessage = "InvalidBatch : \(error)"
            }
            return
        }
        var csv = text
        if job.contentType == "JSON" {
            guard let records = try? JSONParser.parse(batch.request).value.arrayValue else {
                batch.state = "Failed"
                batch.stateMessage = "InvalidBatch : the batch is not a JSON array of records"
                return
            }
            csv = Self.csv(ofRecords: records.compactMap(\.objectValue))
        }
        var ingest = BulkJob(id: batch.id, kind: .ingest, operation: job.operation, object: job.object, externalIdFieldName: job.externalIdFieldName,
                             state: "UploadComplete", columnDelimiter: "COMMA", lineEnding: "LF", createdDate: batch.createdDate,
                             systemModstamp: batch.createdDate, apiVersion: job.apiVersion)
        ingest.uploads = [csv]
        ingest = processIngest(ingest)
        if ingest.state == "Failed" {
            batch.state = "Failed"
            batch.stateMessage = ingest.errorMessage
        }
        batch.results = ingest.rowResults
    }

    /// JSON records as one CSV upload: a column per field any record has (a nested relationship
    /// `{"Account": {"External_Id__c": "A"}}` becomes `Account.External_Id__c`); null is `#N/A`.
    static func csv(ofRecords records: [JSONObject]) -> String {
        var columns: [String] = []
        var rows: [[String: String]] = []
        for record in records {
            var row: [String: String] = [:]
            for (key, value) in record where key != "attributes" {
                if let nested = value.objectValue {
                    for (field, inner) in nested where field != "attributes" { row["\(key).\(field)"] = inner.isNull ? "#N/A" : csvValue(inner) }
                } else {
                    row[key] = value.isNull ? "#N/A" : csvValue(value)
                }
            }
            for key in row.keys.sorted() where !columns.contains(key) { columns.append(key) }
            rows.append(row)
        }
        return ([CSVLine.encode(columns)] + rows.map { row in CSVLine.encode(columns.map { row[$0] ?? "" }) }).joined(separator: "\n") + "\n"
    }

    private func jobInfo(_ job: BulkV1Job) -> JSONValue {
        let completed = job.batches.filter { $0.state == "Completed" }.count
        let failedBatches = job.batches.filter { $0.state == "Failed" }.count
        var info: JSONObject = [
            "id": .string(job.id), "operation": .string(job.operation), "object": .string(job.object),
            "createdById": .string(actingUserId ?? orgId), "createdDate": .string(SalesforceTime.format(job.createdDate)),
            "systemModstamp": .string(SalesforceTime.format(job.systemModstamp)), "state": .string(job.state),
            "concurrencyMode": "Parallel", "contentType": .string(job.contentType),
            "numberBatchesQueued": 0, "numberBatchesInProgress": 0, "numberBatchesCompleted": .integer(Int64(completed)),
            "numberBatchesFailed": .integer(Int64(failedBatches)), "numberBatchesTotal": .integer(Int64(job.batches.count)),
            "numberRecordsProcessed": .integer(Int64(job.batches.reduce(0) { $0 + $1.processed })), "numberRetries": 0,
            "apiVersion": .double(Double(job.apiVersion) ?? 0),
            "numberRecordsFailed": .integer(Int64(job.batches.reduce(0) { $0 + $1.failed })),
            "totalProcessingTime": 0, "apiActiveProcessingTime": 0, "apexProcessingTime": 0,
        ]
        if let field = job.externalIdFieldName { info["externalIdFieldName"] = .string(field) }
        return .object(info)
    }

    private func batchInfo(_ batch: BulkV1Batch, job: BulkV1Job) -> JSONValue {
        var info: JSONObject = ["id": .string(batch.id), "jobId": .string(job.id), "state": .string(batch.state)]
        if let message = batch.stateMessage { info["stateMessage"] = .string(message) }
        info["createdDate"] = .string(SalesforceTime.format(batch.createdDate))
        info["systemModstamp"] = .string(SalesforceTime.format(batch.createdDate))
        info["numberRecordsProcessed"] = .integer(Int64(batch.processed))
        info["numberRecordsFailed"] = .integer(Int64(batch.failed))
        info["totalProcessingTime"] = 0
        info["apiActiveProcessingTime"] = 0
        info["apexProcessingTime"] = 0
        return .object(info)
    }

    /// The fields of a flat `jobInfo` document, XML or JSON.
    static func asyncFields(_ body: Data, json: Bool) throws(APIError) -> [String: String] {
        if json {
            guard let object = try? JSONParser.parse(body).value.objectValue else { throw APIError(400, "InvalidJob", "the body is not a JSON object") }
            var fields: [String: String] = [:]
            for (key, value) in object {
                fields[key] = value.stringValue ?? value.integerValue.map(String.init) ?? value.jsonString
            }
            return fields
        }
        let text = String(decoding: body, as: UTF8.self)
        var fields: [String: String] = [:]
        for name in ["operation", "object", "contentType", "externalIdFieldName", "concurrencyMode", "state"] {
            guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { continue }
            fields[name] = String(text[open.upperBound..<close.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard !fields.isEmpty else { throw APIError(400, "InvalidJob", "the body is not a jobInfo document") }
        return fields
    }

    static func asyncDocument(_ value: JSONValue, root: String, json: Bool, status: Int = 200) -> EmulatorResponse {
        json ? asyncJSON(status, value) : .text(status, xml(value, root: root), contentType: "application/xml")
    }

    /// A JSON answer of the Bulk API 1.0: typed `application/json` exactly, without a charset, as
    /// an org sends it (salesforce-bulk, under amaxa, tells JSON from XML by that exact value).
    static func asyncJSON(_ status: Int, _ value: JSONValue) -> EmulatorResponse {
        .text(status, value.jsonString, contentType: "application/json")
    }

    static func asyncError(_ status: Int, _ code: String, _ message: String, json: Bool) -> EmulatorResponse {
        asyncDocument(["exceptionCode": .string(code), "exceptionMessage": .string(message)], root: "error", json: json, status: status)
    }

    /// A flat object (arrays repeat their element) as the Bulk API's XML.
    static func xml(_ value: JSONValue, root: String) -> String {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        func element(_ name: String, _ value: JSONValue) -> String {
            switch value {
            case .array(let items): return items.map { element(name, $0) }.joined()
            case .object(let object): return "<\(name)>" + object.map { element($0.key, $0.value) }.joined() + "</\(name)>"
            case .string(let text): return "<\(name)>\(escape(text))</\(name)>"
            case .double(let number): return "<\(name)>\(String(format: "%.1f", number))</\(name)>"
            case .null: return ""
            default: return "<\(name)>\(value.jsonString)</\(name)>"
            }
        }
        let inner = value.objectValue.map { $0.map { element($0.key, $0.value) }.joined() } ?? ""
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><\(root) xmlns=\"\(asyncNamespace)\">\(inner)</\(root)>"
    }
}
