import Foundation
import Formats
import GRDB
import JSON
import SOQL

/// Bulk API 2.0: ingest jobs (create, upload CSV, close, results) and query jobs (results paged
/// with `Sforce-Locator` and `Sforce-NumberOfRecords`).
extension OrgEngine {
    static let ingestOperations = ["insert", "update", "upsert", "delete", "hardDelete"]

    func bulk(_ request: EmulatorRequest, version: String, parts: [String]) throws(APIError) -> EmulatorResponse {
        guard let kindName = parts.first, let kind = BulkJob.Kind(rawValue: kindName) else { throw APIError.notFound }
        switch (request.method, parts.count) {
        case ("POST", 1):
            return .json(200, try createJob(kind, request: request, version: version).info(created: true))
        case ("GET", 1):
            let listed = jobs.v2.values.filter { $0.kind == kind }.sorted { $0.id < $1.id }
            return .json(200, ["done": true, "records": .array(listed.map { $0.info() }), "nextRecordsUrl": .null])
        default:
            break
        }
        guard parts.count >= 2, var job = jobs.v2[parts[1]], job.kind == kind else { throw APIError.notFound }
        switch (request.method, parts.count, parts.count > 2 ? parts[2].lowercased() : "") {
        case ("GET", 2, _):
            return .json(200, job.info())
        case ("PUT", 3, "batches") where kind == .ingest:
            guard job.state == "Open" else {
                throw APIError(409, "INVALIDJOBSTATE", "Job is not in the Open state: \(job.state)")
            }
            job.uploads.append(String(decoding: request.body, as: UTF8.self))
            jobs.v2[job.id] = job
            return EmulatorResponse(status: 201)
        case ("PATCH", 2, _):
            guard let state = try request.jsonBody()["state"]?.stringValue else { throw APIError.badJSON("'state' is required") }
            switch state {
            case "UploadComplete" where kind == .ingest && job.state == "Open":
                job.state = "UploadComplete"
                job.systemModstamp = clock.now()
                jobs.v2[job.id] = job
                startIngest(job)
                return .json(200, job.info())
            case "Aborted" where !["JobComplete", "Failed", "Aborted"].contains(job.state):
                // Rows not processed yet stay unprocessed (still to be parsed when the job was
                // closed a moment ago).
                if job.pending.isEmpty, !job.uploads.isEmpty, case .success(let (header, rows)) = BulkJob.parse(uploads: job.uploads, delimiter: job.delimiter) {
                    (job.header, job.pending) = (header, rows)
                }
                job.uploads = []
                job.unprocessed = Array(job.pending.dropFirst(job.nextRow))
                job.pending = []
                job.state = "Aborted"
                job.systemModstamp = clock.now()
                jobs.v2[job.id] = job
                return .json(200, job.info())
            default:
                throw APIError(409, "INVALIDJOBSTATE", "Cannot change job state from \(job.state) to \(state)")
            }
        case ("DELETE", 2, _):
            guard ["UploadComplete", "JobComplete", "Aborted", "Failed"].contains(job.state) else {
                throw APIError(409, "INVALIDJOBSTATE", "Cannot delete a job in state \(job.state)")
            }
            jobs.v2[job.id] = nil
            return .noContent()
        case ("GET", 3, "successfulresults") where kind == .ingest:
            return csv(job, header: ["sf__Id", "sf__Created"], rows: job.successful)
        case ("GET", 3, "failedresults") where kind == .ingest:
            return csv(job, header: ["sf__Id", "sf__Error"], rows: job.failed)
        case ("GET", 3, "unprocessedrecords") where kind == .ingest:
            return csv(job, header: [], rows: job.unprocessed)
        case ("GET", 3, "results") where kind == .query:
            return try queryResults(job, request: request)
        default:
            throw APIError.notFound
        }
    }

    private func createJob(_ kind: BulkJob.Kind, request: EmulatorRequest, version: String) throws(APIError) -> BulkJob {
        let body = try request.jsonBody()
        let columnDelimiter = body["columnDelimiter"]?.stringValue ?? "COMMA"
        guard BulkJob.delimiter(named: columnDelimiter) != nil else {
            throw APIError(400, "INVALIDJOB", "Invalid columnDelimiter: \(columnDelimiter)")
        }
        let lineEnding = body["lineEnding"]?.stringValue ?? "LF"
        guard lineEnding == "LF" || lineEnding == "CRLF" else { throw APIError(400, "INVALIDJOB", "Invalid lineEnding: \(lineEnding)") }
        let now = clock.now()
        let creator = try? read(in: nil) { db in try currentUserId(db) }
        let id = jobs.newId(prefix: "750")
        if kind == .ingest {
            guard let objectName = body["object"]?.stringValue else { throw APIError(400, "INVALIDJOB", "InvalidJob : object is required") }
            let object = try object(named: objectName)
            guard let operation = body["operation"]?.stringValue, Self.ingestOperations.contains(operation) else {
                throw APIError(400, "INVALIDJOB", "InvalidJob : operation must be one of \(Self.ingestOperations.joined(separator: ", "))")
            }
            let externalId = body["externalIdFieldName"]?.stringValue
            if operation == "upsert" && externalId == nil {
                throw APIError(400, "INVALIDJOB", "InvalidJob : External ID was blank for \(object.name). An External ID must be specified for upsert.")
            }
            var job = BulkJob(id: id, kind: .ingest, operation: operation, object: object.name, externalIdFieldName: externalId, state: "Open",
                              columnDelimiter: columnDelimiter, lineEnding: lineEnding, createdDate: now, systemModstamp: now, apiVersion: version)
            if let creator { job.createdById = creator }
            jobs.v2[id] = job
            return job
        }
        guard let text = body["query"]?.stringValue else { throw APIError(400, "INVALIDJOB", "InvalidJob : query is required") }
        let operation = body["operation"]?.stringValue ?? "query"
        guard operation == "query" || operation == "queryAll" else { throw APIError(400, "INVALIDJOB", "InvalidJob : operation must be query or queryAll") }
        let plan: QueryPlan
        do {
            plan = try QueryPlan(query: try SOQL.parseQuery(text), text: text, schema: schema)
        } catch {
            throw APIError(400, "API_ERROR", error.message)
        }
        guard plan.subqueries.isEmpty, plan.query.select.allSatisfy({ $0.fieldPath != nil }) else {
            throw APIError(400, "API_ERROR", "FeatureNotEnabled : Bulk API 2.0 query jobs do not support subqueries or aggregates")
        }
        let (_, views) = try matchingRecords(plan, includeDeleted: operation == "queryAll", parentIds: nil, in: nil)
        var job = BulkJob(id: id, kind: .query, operation: operation, object: plan.object.name, state: "JobComplete",
                          columnDelimiter: columnDelimiter, lineEnding: lineEnding, createdDate: now, systemModstamp: now, apiVersion: version)
        if let creator { job.createdById = creator }
        job.query = text
        let paths = plan.query.select.compactMap(\.fieldPath)
        job.resultHeader = paths.map(\.description)
        job.resultRows = views.map { view in paths.map { Self.csvValue(SOQLEvaluator.nestedValue(in: view, at: $0)) } }
        jobs.v2[id] = job
        var response = job
        response.state = "UploadComplete"
        return response
    }

    static func csvValue(_ value: JSONValue?) -> String {
        switch value ?? .null {
        case .null: return ""
        case .string(let text): return text
        case .bool(let bool): return bool ? "true" : "false"
        case .integer(let number): return String(number)
        case .double(let number): return number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
        case let other: return other.jsonString
        }
    }

    /// Rows an ingest job processes in one transaction before other requests get their turn.
    static let ingestChunkRows = 500

    /// Processes a closed ingest job in the background, as an org does: its uploads are parsed
    /// off the engine (on another core), then its rows are written a chunk at a time, each chunk
    /// one transaction, so the job is `InProgress` with `numberRecordsProcessed` rising while
    /// other requests (its own status polls among them) are answered between chunks.
    private func startIngest(_ job: BulkJob) {
        let (id, uploads, delimiter) = (job.id, job.uploads, job.delimiter)
        Task.detached { [self] in
            let parsed = BulkJob.parse(uploads: uploads, delimiter: delimiter)
            guard await beginIngest(id, parsed) else { return }
            while await ingestChunk(id) {
                // Requests that arrived meanwhile (the job's own polls) go first.
                await Task.yield()
            }
        }
    }

    /// Takes the parsed rows; `false` when there is nothing to process (the job failed, was
    /// aborted or is gone after a reset).
    private func beginIngest(_ id: String, _ parsed: Result<(header: [String], rows: [[String]]), BulkJob.ParseFailure>) -> Bool {
        guard var job = jobs.v2[id], job.state == "UploadComplete" else { return false }
        prepare(&job, parsed)
        jobs.v2[id] = job
        return job.state == "InProgress"
    }

    /// Takes a job's parsed uploads: `InProgress` with its rows pending, or `Failed` with why.
    private func prepare(_ job: inout BulkJob, _ parsed: Result<(header: [String], rows: [[String]]), BulkJob.ParseFailure>) {
        job.uploads = []
        job.systemModstamp = clock.now()
        switch parsed {
        case .failure(let failure):
            job.state = "Failed"
            job.errorMessage = failure.message
        case .success(let (header, rows)):
            job.header = header
            if let problem = headerProblem(job) {
                job.state = "Failed"
                job.errorMessage = problem
                job.unprocessed = rows
            } else {
                job.pending = rows
                job.state = "InProgress"
            }
        }
    }

    /// Processes the next chunk of a running job; `false` once it is complete (or gone).
    private func ingestChunk(_ id: String) async -> Bool {
        guard jobs.v2[id]?.state == "InProgress" else { return false }
        if faults.settings.bulkPauseAfterRows > 0, let job = jobs.v2[id], job.nextRow >= faults.settings.bulkPauseAfterRows {
            await stall()
            return true
        }
        // Taken out while it is worked on, so its result arrays grow in place (not copied).
        var job = jobs.v2.removeValue(forKey: id)!
        let started = ContinuousClock.now
        let asUser = actingUserId
        actingUserId = job.createdById
        ingestRows(&job, upTo: min(job.pending.count, job.nextRow + Self.ingestChunkRows))
        actingUserId = asUser
        let elapsed = ContinuousClock.now - started
        job.processingMs += elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        if job.nextRow >= job.pending.count {
            job.pending = []
            job.state = "JobComplete"
        }
        job.systemModstamp = clock.now()
        jobs.v2[id] = job
        return job.state == "InProgress"
    }

    /// Runs an ingest job to its end in the calling request (Bulk API 1.0 batches, which are
    /// complete when first polled).
    func processIngest(_ input: BulkJob) -> BulkJob {
        var job = input
        prepare(&job, BulkJob.parse(uploads: job.uploads, delimiter: job.delimiter))
        guard job.state == "InProgress" else { return job }
        while job.nextRow < job.pending.count {
            ingestRows(&job, upTo: min(job.pending.count, job.nextRow + Self.ingestChunkRows))
        }
        job.pending = []
        job.state = "JobComplete"
        return job
    }

    /// Why a job's columns cannot be ingested (an unknown field, no `Id` where one is needed).
    private func headerProblem(_ job: BulkJob) -> String? {
        let object = schema.object(job.object)!
        for column in job.header {
            let name = column.split(separator: ".").first.map(String.init) ?? column
            if object.field(name) == nil && object.relationship(name) == nil { return "InvalidBatch : Field name not found : \(column)" }
        }
        if ["delete", "hardDelete", "update"].contains(job.operation) && !job.header.contains(where: { $0.lowercased() == "id" }) {
            return "InvalidBatch : Field name not found : Id"
        }
        return nil
    }

    /// Writes rows `nextRow..<end` in one transaction (a failed row leaves no trace: a delete
    /// runs under a savepoint, the other operations write only once every check has passed):
    /// failures go to failedResults with `CODE:message:fields --`, the rest to successfulResults.
    private func ingestRows(_ job: inout BulkJob, upTo end: Int) {
        let object = schema.object(job.object)!
        let version = job.apiVersion
        let (operation, externalId) = (job.operation, job.externalIdFieldName)
        let columns = job.header.map { ingestColumn($0, object: object) }
        let rows = job.pending[job.nextRow..<end]
        var results: [(row: [String], id: String, created: Bool, error: APIError?)] = []
        results.reserveCapacity(rows.count)
        do {
            try writeBlock(in: nil) { db in
                var ids = operation == "insert" ? try RecordStore.reserveIds(db, prefix: object.keyPrefix, count: rows.count) : nil
                let idColumn = columns.firstIndex { if case .id = $0 { true } else { false } }
                for row in rows {
                    // Read first: a row failing on any column still reports its id.
                    let id = idColumn.map { $0 < row.count ? row[$0] : "" } ?? ""
                    do {
                        var fields = JSONObject()
                        for (column, value) in zip(columns, row) {
                            switch column {
                            case .id: continue
                            case .field(let name) where !value.isEmpty: fields[name] = value == "#N/A" ? .null : .string(value)
                            case .relationship(let reference, let parent, let key, let spelled) where !value.isEmpty:
                                fields[reference] = value == "#N/A" ? .null
                                    : .string(try resolve(value, parent: parent, field: key, spelled: spelled, reference: reference, db: db))
                            case .field, .relationship: continue
                            }
                        }
                        let input = fields
                        let write = { () throws(APIError) -> (String, Bool) in
                            switch operation {
                            case "insert":
                                return (try self.createRecord(db, object: object, input: input, reservedId: ids?.take()), true)
                            case "update":
                                try self.updateRecord(db, object: object, id: id, input: input)
                                return (id, false)
                            case "upsert":
                                let key = externalId!
                                let value = key.lowercased() == "id" ? id : (input[key]?.stringValue ?? "")
                                let result = try self.upsertRecord(db, object: object, fieldName: key, value: value, input: input, version: version)
                                return (result.id, result.created)
                            default:
                                try self.deleteRecord(db, object: object, id: id)
                                return (id, false)
                            }
                        }
                        // A create, update or upsert writes once every check has passed; a delete's
                        // cascade may fail after writing.
                        let (recordId, created) = ["insert", "update", "upsert"].contains(operation) ? try write() : try db.withRecordSavepoint(write)
                        results.append((row, recordId, created, nil))
                    } catch let error as APIError {
                        results.append((row, id, false, error))
                    }
                }
            }
        } catch {
            // The chunk's transaction failed as a whole: none of its rows was applied.
            results = rows.map { ($0, "", false, APIError.unexpected(error)) }
        }
        for result in results {
            if let error = result.error {
                let fields = (error.fields ?? []).joined(separator: ",")
                job.failed.append([result.id, "\(error.errorCode):\(error.message):\(fields) --"] + result.row)
            } else {
                job.successful.append([result.id, result.created ? "true" : "false"] + result.row)
            }
            job.rowResults.append(.init(id: result.id, created: result.created, error: result.error))
        }
        job.nextRow = end
    }

    /// Where a job's CSV column goes in each record, worked out once per chunk.
    private enum IngestColumn {
        /// The record's `Id` (any case).
        case id
        /// A field, named as the column is.
        case field(String)
        /// `Account.External_Id__c`: the lookup `reference` takes the id of the `parent` record
        /// whose `field` has the value (`spelled` as the column names it).
        case relationship(reference: String, parent: String, field: String, spelled: String)
    }

    private func ingestColumn(_ column: String, object: ObjectSchema) -> IngestColumn {
        if column.lowercased() == "id" { return .id }
        let parts = column.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let reference = object.relationship(parts[0]),
              let parent = reference.referenceTo.flatMap({ schema.object($0) }) else { return .field(column) }
        return .relationship(reference: reference.name, parent: parent.name, field: parent.field(parts[1])?.name ?? parts[1], spelled: parts[1])
    }

    /// The id of the one live `parent` record whose `field` is `key` (an `Account.External_Id__c` column).
    private func resolve(_ key: String, parent: String, field: String, spelled: String, reference: String, db: Database) throws(APIError) -> String {
        let ids = (try? lookups.ids(db, type: parent, field: field, equalTo: key, limit: 2)) ?? []
        guard ids.count == 1 else {
            let what = ids.isEmpty ? "not found" : "matched more than one record"
            throw APIError(400, "INVALID_FIELD", "Foreign key external ID: \(key) \(what) for field \(spelled) in entity \(parent)", fields: [reference])
        }
        return ids[0]
    }

    private func csv(_ job: BulkJob, header: [String], rows: [[String]]) -> EmulatorResponse {
        var lines: [String] = []
        if !job.header.isEmpty || !header.isEmpty {
            lines.append((header.map { "\"\($0)\"" } + [CSVLine.encode(job.header, delimiter: job.delimiter)].filter { !$0.isEmpty })
                .joined(separator: String(job.delimiter)))
        }
        for row in rows {
            let prefix = Array(row.prefix(header.count))
            let rest = Array(row.dropFirst(header.count))
            let cells = [CSVLine.encode(prefix, delimiter: job.delimiter, quoteAll: true), CSVLine.encode(rest, delimiter: job.delimiter)].filter { !$0.isEmpty }
            lines.append(cells.joined(separator: String(job.delimiter)))
        }
        return .text(200, lines.map { $0 + job.newline }.joined(), contentType: "text/csv")
    }

    private func queryResults(_ job: BulkJob, request: EmulatorRequest) throws(APIError) -> EmulatorResponse {
        guard job.state == "JobComplete" else { throw APIError(412, "JOB_NOT_COMPLETE", "The job is not complete") }
        var offset = 0
        if let locator = request.query["locator"], !locator.isEmpty, locator != "null" {
            let padded = locator + String(repeating: "=", count: (4 - locator.count % 4) % 4)
            guard let data = Data(base64Encoded: padded), let value = Int(String(decoding: data, as: UTF8.self)) else {
                throw APIError(400, "INVALIDLOCATOR", "Invalid locator: \(locator)")
            }
            offset = value
        }
        let maxRecords = Int(request.query["maxRecords"] ?? "") ?? 50000
        let end = min(job.resultRows.count, offset + max(1, maxRecords))
        var text = CSVLine.encode(job.resultHeader, delimiter: job.delimiter, quoteAll: true) + job.newline
        for row in job.resultRows[min(offset, end)..<end] {
            text += CSVLine.encode(row, delimiter: job.delimiter, quoteAll: true) + job.newline
        }
        let next = end < job.resultRows.count
            ? Data(String(end).utf8).base64EncodedString().trimmingCharacters(in: CharacterSet(charactersIn: "="))
            : "null"
        var response = EmulatorResponse.text(200, text, contentType: "text/csv")
        response.headers += [("Sforce-Locator", next), ("Sforce-NumberOfRecords", String(end - min(offset, end)))]
        return response
    }
}
