import Foundation
import Formats
import GRDB
import JSON

/// sObject Collections (`/composite/sobjects`): up to 200 records per request, a result per record;
/// a retrieve by request body reads up to 2,000.
extension OrgEngine {
    static let collectionLimit = 200
    static let retrieveBodyLimit = 2000

    /// The records of `ids` (`null` for one that does not exist), with `fields` (all when empty).
    func retrieve(_ object: ObjectSchema, ids: [String], fields: [String], limit: Int = collectionLimit,
                  version: String, in outer: Database?) throws(APIError) -> EmulatorResponse {
        guard !ids.isEmpty, ids.count <= limit else {
            throw APIError(400, "EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than \(limit) records into this call")
        }
        let selected = selectedFields(of: object, fields.isEmpty ? nil : ["Id"] + fields)
        // Read in one go, only the fields asked for; an id that is malformed, of another object,
        // missing or deleted gives null.
        let normalized = ids.map { id in SalesforceId.normalize(id).flatMap { SalesforceId.prefix(of: $0) == object.keyPrefix ? $0 : nil } }
        let records = try transaction(in: outer) { db throws(APIError) -> [JSONValue] in
            let found: [String: StoredRecord]
            do {
                let stored = try RecordStore.fetch(db, ids: Array(Set(normalized.compactMap { $0 })), keeping: Set(selected))
                found = Dictionary(stored.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            } catch {
                throw APIError.unexpected(error)
            }
            return normalized.map { id in
                guard let record = id.flatMap({ found[$0] }), !record.isDeleted else { return .null }
                return recordJSON(record, object: object, version: version, selected: selected)
            }
        }
        return .json(200, .array(records))
    }

    /// `/composite/sobjects[/…]`, as routed.
    func collections(_ r: RoutedRequest) throws(APIError) -> EmulatorResponse {
        try collections(r.request, version: r.version, parts: Array(r.parts.dropFirst(2)), in: r.database)
    }

    func collections(_ request: EmulatorRequest, version: String, parts: [String], in outer: Database?) throws(APIError) -> EmulatorResponse {
        switch (request.method, parts.count) {
        case ("GET", 1):
            let ids = (request.query["ids"] ?? "").split(separator: ",").map(String.init)
            let fields = (request.query["fields"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return try retrieve(try object(named: parts[0]), ids: ids, fields: fields, version: version, in: outer)
        case ("POST", 1):
            // The retrieve for id lists too long for a URL: {"ids": [...], "fields": [...]}.
            let body = try request.jsonBody()
            guard let ids = body["ids"]?.arrayValue?.compactMap(\.stringValue), let fields = body["fields"]?.arrayValue?.compactMap(\.stringValue),
                  !fields.isEmpty else {
                throw APIError(400, "INVALID_FIELD", "The request body needs \"ids\" and \"fields\" arrays of strings.", fields: [])
            }
            return try retrieve(try object(named: parts[0]), ids: ids, fields: fields, limit: Self.retrieveBodyLimit, version: version, in: outer)
        case ("POST", 0), ("PATCH", 0), ("PATCH", 2):
            let body = try request.jsonBody()
            guard let records = body["records"]?.arrayValue else { throw APIError.badJSON("'records' is a required field.") }
            guard records.count <= Self.collectionLimit else {
                throw APIError(400, "EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than \(Self.collectionLimit) records into this call")
            }
            let allOrNone = body["allOrNone"]?.boolValue ?? false
            let upsertTarget = parts.count == 2 ? (try object(named: parts[0]), parts[1]) : nil
            // A create's ids in one block per object.
            var creates: [String: Int] = [:]
            if request.method == "POST" {
                for record in records {
                    if let type = record["attributes"]?["type"]?.stringValue, let prefix = schema.object(type)?.keyPrefix { creates[prefix, default: 0] += 1 }
                }
            }
            var reserved: [String: RecordStore.IdBlock] = [:]
            liveIdsSeen = []
            defer { liveIdsSeen = nil }
            let reserve = { (db: Database) throws in
                for (prefix, count) in creates { reserved[prefix] = try RecordStore.reserveIds(db, prefix: prefix, count: count) }
            }
            return .json(200, .array(try runCollection(records.count, allOrNone: allOrNone, before: reserve, savepoints: false, in: outer) { db, index throws(APIError) -> JSONObject in
                guard let record = records[index].objectValue else { throw APIError(400, "INVALID_FIELD", "record is not an object", fields: []) }
                if let (object, field) = upsertTarget {
                    guard let key = record[field].map({ $0.stringValue ?? ($0.isNull ? "" : $0.jsonString) }) ?? (field.lowercased() == "id" ? "" : nil) else {
                        throw APIError(400, "MISSING_ARGUMENT", "\(field) not specified", fields: [field])
                    }
                    let result = try upsertRecord(db, object: object, fieldName: field, value: key, input: record, version: version)
                    return ["id": .string(result.id), "success": true, "errors": [], "created": .bool(result.created)]
                }
                guard let typeName = record["attributes"]?["type"]?.stringValue else {
                    throw APIError(400, "INVALID_TYPE", "sObject type 'null' is not supported.", fields: [])
                }
                guard let object = schema.object(typeName) else {
                    throw APIError(400, "INVALID_TYPE", "sObject type '\(typeName)' is not supported.", fields: [])
                }
                if request.method == "POST" {
                    if record["Id"] != nil || record["id"] != nil {
                        throw APIError.invalidField("The Id field should not be specified in the sobject data.", fields: ["Id"])
                    }
                    let id = try createRecord(db, object: object, input: record, reservedId: reserved[object.keyPrefix]?.take())
                    return ["id": .string(id), "success": true, "errors": []]
                }
                guard let id = record["Id"]?.stringValue ?? record["id"]?.stringValue else {
                    throw APIError(400, "MISSING_ARGUMENT", "Id not specified in an update call", fields: [])
                }
                var fields = record
                fields["Id"] = nil
                fields["id"] = nil
                try updateRecord(db, object: object, id: id, input: fields)
                return ["id": .string(SalesforceId.normalize(id) ?? id), "success": true, "errors": []]
            }))
        case ("DELETE", 0):
            let ids = (request.query["ids"] ?? "").split(separator: ",").map(String.init)
            guard !ids.isEmpty, ids.count <= Self.collectionLimit else {
                throw APIError(400, "EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than \(Self.collectionLimit) records into this call")
            }
            let allOrNone = request.query["allOrNone"] == "true"
            return .json(200, .array(try runCollection(ids.count, allOrNone: allOrNone, savepoints: true, in: outer) { db, index throws(APIError) -> JSONObject in
                try deleteRecord(db, object: nil, id: ids[index])
                return ["id": .string(SalesforceId.normalize(ids[index]) ?? ids[index]), "success": true, "errors": []]
            }))
        default:
            return .error(.notFound)
        }
    }

    /// Runs one operation per record in a transaction, so a failed record leaves no trace; with
    /// `allOrNone` any failure rolls every record back. Injected record faults (`recordErrorRate`)
    /// fail single records here.
    /// - Parameters:
    ///   - before: runs in the transaction before the first record (outside any record's savepoint).
    ///   - savepoints: each record under a savepoint of its own, for operations that may fail
    ///     after writing (a delete's cascade); creates, updates and upserts write only once every
    ///     check has passed, and go without.
    func runCollection(_ count: Int, allOrNone: Bool, before: (Database) throws -> Void = { _ in }, savepoints: Bool, in outer: Database?,
                       _ operation: (Database, Int) throws(APIError) -> JSONObject) throws(APIError) -> [JSONValue] {
        var results: [JSONObject] = []
        var failed = false
        let recordFaults = (0..<count).map { _ in faults.recordError() }
        do {
            try writeBlock(in: outer) { db in
                try before(db)
                for index in 0..<count {
                    do {
                        if let fault = recordFaults[index] {
                            throw fault
                        }
                        let result = savepoints
                            ? try db.withRecordSavepoint { () throws(APIError) -> JSONObject in try operation(db, index) }
                            : try operation(db, index)
                        results.append(result)
                    } catch let error as APIError {
                        failed = true
                        results.append(["success": false, "errors": [error.recordError]])
                    }
                }
                if allOrNone && failed { throw TransactionAbort(error: APIError(400, "ALL_OR_NONE", "rolled back")) }
            }
        } catch is TransactionAbort {
            return results.map { result in
                if result["success"] == false { return .object(result) }
                var rolledBack = JSONObject()
                if let id = result["id"] { rolledBack["id"] = id }
                rolledBack["success"] = false
                rolledBack["errors"] = [APIError(400, "ALL_OR_NONE_OPERATION_ROLLED_BACK",
                                                 "Record rolled back because not all records were valid and the request was using AllOrNone header",
                                                 fields: []).recordError]
                return .object(rolledBack)
            }
        } catch {
            throw APIError.unexpected(error)
        }
        return results.map(JSONValue.object)
    }
}

extension OrgEngine {
    /// Runs `body` in a write transaction — or, inside a Composite request, in a savepoint of the
    /// composite's transaction — rolled back when it throws.
    func writeBlock(in outer: Database?, _ body: (Database) throws -> Void) throws {
        if let outer {
            try outer.execute(sql: "SAVEPOINT block")
            do {
                try body(outer)
                try outer.execute(sql: "RELEASE SAVEPOINT block")
            } catch {
                try outer.execute(sql: "ROLLBACK TO SAVEPOINT block")
                try outer.execute(sql: "RELEASE SAVEPOINT block")
                throw error
            }
            return
        }
        try store.queue.write { db in try body(db) }
    }
}

extension Database {
    /// Runs `body` inside a savepoint that is rolled back when it throws.
    func withRecordSavepoint<T>(_ body: () throws(APIError) -> T) throws -> T {
        // Cached statements: a load opens one savepoint per record.
        try cachedStatement(sql: "SAVEPOINT record").execute()
        do {
            let value = try body()
            try cachedStatement(sql: "RELEASE SAVEPOINT record").execute()
            return value
        } catch {
            try cachedStatement(sql: "ROLLBACK TO SAVEPOINT record").execute()
            try cachedStatement(sql: "RELEASE SAVEPOINT record").execute()
            throw error
        }
    }
}
