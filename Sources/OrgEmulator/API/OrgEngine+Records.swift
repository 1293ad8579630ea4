import Foundation
import Formats
import GRDB
import JSON

/// The record operations every API shares (REST, Collections, Composite, Tree, Bulk).
extension OrgEngine {
    /// The object named in a URL, or NOT_FOUND as an org answers for an unknown sObject.
    func object(named name: String) throws(APIError) -> ObjectSchema {
        guard let object = schema.object(name) else { throw APIError.notFound }
        return object
    }

    /// Whether the record `id` exists and is not deleted (a reference field's check).
    func liveRecordExists(_ db: Database, id: String) -> Bool {
        if liveIdsSeen?.contains(id) == true { return true }
        let live = (try? Bool.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) > 0 FROM records WHERE id = ? AND isDeleted = 0"), arguments: [id])) ?? false
        if live { liveIdsSeen?.insert(id) }
        return live
    }

    /// Creates a record and returns its id. Every check comes first: a create that fails has
    /// written nothing (but, without `reservedId`, maybe taken an id), so its caller needs no
    /// savepoint to undo it.
    /// - Parameter reservedId: an id taken for it beforehand (``RecordStore/reserveIds(_:prefix:count:)``);
    ///   a new one is taken when `nil`.
    func createRecord(_ db: Database, object: ObjectSchema, input: JSONObject, reservedId: String? = nil) throws(APIError) -> String {
        guard !Self.readOnlyObjects.contains(object.name) else {
            throw APIError(400, "INVALID_TYPE", "sObject type '\(object.name)' cannot be created in the emulator")
        }
        let values = try validator.validate(try resolvingForeignKeys(db, object: object, input: input), object: object, isCreate: true) {
            self.liveRecordExists(db, id: $0)
        }
        try Self.checkRecordType(values, object: object)
        let now = clock.now()
        do {
            // Checked before anything is written: a create that fails has written nothing (a
            // collection's records need no savepoint of their own).
            try checkUnique(db, object: object, values: values, excluding: reservedId ?? "")
            let id = try reservedId ?? RecordStore.nextId(db, prefix: object.keyPrefix)
            // Every field of the object that holds a value, built in one go (a lookup per field would cost more).
            var pairs = Self.systemPairs(id: id, userId: try currentUserId(db), timestamp: .string(timestamp(now)))
            pairs.reserveCapacity(object.fields.count + pairs.count)
            for (name, empty) in object.emptyDataValues {
                // Empty fields are left out, as the store leaves them out.
                let value = values[name] ?? empty
                if !value.isNull { pairs.append((name, value)) }
            }
            var fields = JSONObject(uniqueKeysWithValues: pairs)
            Self.setOrgValues(&fields, object: object, ownerId: try currentUserId(db))
            try RecordStore.save(db, StoredRecord(id: id, type: object.name, fields: fields, isDeleted: false, systemModstamp: now))
            return id
        } catch {
            throw APIError.unexpected(error)
        }
    }

    /// Objects whose records the org keeps itself: read through the API, never written.
    static let readOnlyObjects: Set<String> = ["Organization", "User", "RecordType", "EntityDefinition", "ApexClass", "InstalledSubscriberPackage"]

    /// The values an org sets itself: the owner (the creating user) and the default record type
    /// when none is given, and every compound name from its parts.
    static func setOrgValues(_ fields: inout JSONObject, object: ObjectSchema, ownerId: String) {
        if object.field("OwnerId") != nil, fields["OwnerId"] == nil || fields["OwnerId"] == .null { fields["OwnerId"] = .string(ownerId) }
        if let first = object.recordTypes.first, fields["RecordTypeId"] == nil || fields["RecordTypeId"] == .null {
            fields["RecordTypeId"] = .string(first.id)
        }
        for (name, names) in object.compoundFields {
            let parts = names.compactMap { fields[$0]?.stringValue }.filter { !$0.isEmpty }
            fields[name] = parts.isEmpty ? nil : .string(parts.joined(separator: " "))
        }
    }

    /// A record type given for a record must be one of its object's.
    static func checkRecordType(_ values: JSONObject, object: ObjectSchema) throws(APIError) {
        guard let id = values["RecordTypeId"]?.stringValue, !object.recordTypes.contains(where: { $0.id == id }) else { return }
        throw APIError(400, "INVALID_CROSS_REFERENCE_KEY", "Record Type ID: this ID value isn't valid for the user: \(id)", fields: ["RecordTypeId"])
    }

    /// Resolves an id from a URL or body for `object`: malformed → MALFORMED_ID, missing →
    /// NOT_FOUND, in the recycle bin → ENTITY_IS_DELETED.
    func existingRecord(_ db: Database, object: ObjectSchema?, id rawId: String) throws(APIError) -> StoredRecord {
        guard let id = SalesforceId.normalize(rawId) else {
            throw APIError.malformedId(object?.label ?? "Record", rawId)
        }
        if let object, SalesforceId.prefix(of: id) != object.keyPrefix {
            throw APIError.malformedId(object.label, rawId)
        }
        guard let record = try? RecordStore.fetch(db, id: id) else { throw APIError.notFound }
        if record.isDeleted { throw APIError.entityIsDeleted }
        return record
    }

    /// Updates the given fields of a record, written in one statement once every check has
    /// passed (a failed update has written nothing).
    func updateRecord(_ db: Database, object: ObjectSchema, id: String, input: JSONObject) throws(APIError) {
        var record = try existingRecord(db, object: object, id: id)
        var fields = input
        fields["Id"] = nil
        if let bodyId = input["Id"]?.stringValue ?? input["id"]?.stringValue, SalesforceId.normalize(bodyId) != record.id {
            throw APIError.invalidField("The Id field should not be specified in the sobject data.", fields: ["Id"])
        }
        fields["id"] = nil
        let values = try validator.validate(try resolvingForeignKeys(db, object: object, input: fields), object: object, isCreate: false) {
            self.liveRecordExists(db, id: $0)
        }
        try Self.checkRecordType(values, object: object)
        let now = clock.now()
        do {
            try checkUnique(db, object: object, values: values, excluding: record.id)
            for (name, value) in values { record.fields[name] = value }
            Self.setOrgValues(&record.fields, object: object, ownerId: try currentUserId(db))
            record.fields["LastModifiedDate"] = .string(timestamp(now))
            record.fields["LastModifiedById"] = .string(try currentUserId(db))
            record.fields["SystemModstamp"] = .string(timestamp(now))
            record.systemModstamp = now
            try RecordStore.save(db, record)
        } catch {
            throw APIError.unexpected(error)
        }
    }

    /// Soft-deletes a record as an org does: its children are deleted with it (cascade,
    /// master-detail), block the delete (restricted), or lose their lookup value.
    func deleteRecord(_ db: Database, object: ObjectSchema?, id: String) throws(APIError) {
        let record = try existingRecord(db, object: object, id: id)
        let parent = schema.object(record.type)!
        let now = clock.now()
        do {
            for relationship in parent.childRelationships {
                let children = try RecordStore.fetchChildren(db, type: relationship.childSObject, field: relationship.field, parentIds: [record.id])
                if children.isEmpty { continue }
                if relationship.restrictedDelete {
                    throw APIError(400, "DELETE_FAILED",
                                   "Your attempt to delete \(record.id) could not be completed because it is associated with the following \(relationship.childSObject) records: \(children.prefix(5).map(\.id).joined(separator: ", "))",
                                   fields: [])
                }
                for var child in children {
                    if relationship.cascadeDelete {
                        try deleteRecord(db, object: nil, id: child.id)
                    } else {
                        child.fields[relationship.field] = .null
                        child.fields["LastModifiedDate"] = .string(timestamp(now))
                        child.fields["SystemModstamp"] = .string(timestamp(now))
                        child.systemModstamp = now
                        try RecordStore.save(db, child)
                    }
                }
            }
            var deleted = record
            deleted.isDeleted = true
            deleted.fields["IsDeleted"] = .bool(true)
            deleted.fields["SystemModstamp"] = .string(timestamp(now))
            deleted.fields["LastModifiedDate"] = .string(timestamp(now))
            deleted.systemModstamp = now
            try RecordStore.save(db, deleted)
        } catch {
            throw APIError.unexpected(error)
        }
    }

    /// Upserts on an external id (or any idLookup field, or `Id`): creates when nothing matches,
    /// updates one match, refuses several (HTTP 300 with their URLs).
    func upsertRecord(_ db: Database, object: ObjectSchema, fieldName: String, value: String, input: JSONObject, version: String)
        throws(APIError) -> (id: String, created: Bool)
    {
        guard let field = object.field(fieldName), field.idLookup || field.externalId else {
            throw APIError(404, "NOT_FOUND", "Provided external ID field does not exist or is not accessible: \(fieldName)")
        }
        var body = input
        body[field.name] = nil
        if field.name == "Id" {
            if value.isEmpty || value.lowercased() == "null" { return (try createRecord(db, object: object, input: body), true) }
            _ = try existingRecord(db, object: object, id: value)
            try updateRecord(db, object: object, id: value, input: body)
            return (SalesforceId.normalize(value)!, false)
        }
        let matches: [String]
        do {
            matches = try lookups.ids(db, type: object.name, field: field.name, equalTo: value, limit: 10)
        } catch {
            throw APIError.unexpected(error)
        }
        if matches.count > 1 {
            throw APIError(300, "MULTIPLE_CHOICES", matches.map { "/services/data/v\(version)/sobjects/\(object.name)/\($0)" }.joined(separator: ","))
        }
        if let id = matches.first {
            try updateRecord(db, object: object, id: id, input: body)
            return (id, false)
        }
        body[field.name] = .string(value)
        return (try createRecord(db, object: object, input: body), true)
    }

    /// DUPLICATE_VALUE when a unique field's value is taken by another live record.
    func checkUnique(_ db: Database, object: ObjectSchema, values: JSONObject, excluding id: String) throws {
        for name in object.uniqueFields {
            guard let value = values[name], !value.isNull else { continue }
            let text = value.stringValue ?? value.jsonString
            if let other = try lookups.ids(db, type: object.name, field: name, equalTo: text, excluding: id, limit: 1).first {
                throw APIError(400, "DUPLICATE_VALUE",
                               "duplicate value found: \(name) duplicates value on record with id: \(other.prefix(15))", fields: [])
            }
        }
    }

    /// A record as the API returns it: `attributes`, then the fields (all, or the named ones).
    func recordJSON(_ record: StoredRecord, version: String, fields names: [String]? = nil) -> JSONValue {
        let object = schema.object(record.type)!
        return recordJSON(record, object: object, version: version, selected: selectedFields(of: object, names))
    }

    /// The names of `object`'s fields among `names` (any case; all when `nil`), in describe order.
    func selectedFields(of object: ObjectSchema, _ names: [String]?) -> [String] {
        let wanted = names.map { Set($0.map { $0.lowercased() }) }
        return object.fields.map(\.name).filter { wanted?.contains($0.lowercased()) ?? true }
    }

    /// A record as the API returns it, with the fields `selected` (from ``selectedFields(of:_:)``).
    func recordJSON(_ record: StoredRecord, object: ObjectSchema, version: String, selected: [String]) -> JSONValue {
        let attributes: JSONValue = ["type": .string(object.name), "url": .string("/services/data/v\(version)/sobjects/\(object.name)/\(record.id)")]
        return .object(JSONObject(uniqueKeysWithValues: [("attributes", attributes)] + selected.map { ($0, record.fields[$0] ?? .null) }))
    }

    /// Runs `body` in one write transaction, rolled back when it throws — or, given the open
    /// transaction of the request it runs in (`outer`: a write request's, a Composite's), under a
    /// savepoint of that one.
    func transaction<T>(in outer: Database?, _ body: (Database) throws(APIError) -> T) throws(APIError) -> T {
        do {
            if let outer {
                return try outer.withRecordSavepoint { () throws(APIError) -> T in try body(outer) }
            }
            return try store.queue.write { db in
                do {
                    return try body(db)
                } catch let error as APIError {
                    throw TransactionAbort(error: error)
                }
            }
        } catch let error as APIError {
            throw error
        } catch let abort as TransactionAbort {
            throw abort.error
        } catch {
            throw APIError.unexpected(error)
        }
    }

    /// Runs a read on `outer`, the open transaction of the request it runs in, or on a read
    /// of its own. A read nested in another passes that one's `db`: GRDB connections are not
    /// reentrant.
    func read<T>(in outer: Database?, _ body: (Database) throws -> T) throws -> T {
        if let outer { return try body(outer) }
        return try store.queue.read { db in try body(db) }
    }

    /// A write transaction of its own for a request that groups several operations (Composite,
    /// Graph, Tree). Such requests cannot be nested inside one another.
    func exclusiveWrite(in outer: Database?, _ body: (Database) throws -> Void) throws {
        guard !groupWriteOpen else {
            throw APIError(400, "INVALID_API_INPUT", "Composite, graph and tree requests cannot be nested in a composite request")
        }
        groupWriteOpen = true
        defer { groupWriteOpen = false }
        if let outer {
            // Inside the request's own transaction: a savepoint, rolled back when `body` throws.
            try outer.inSavepoint {
                try body(outer)
                return .commit
            }
            return
        }
        try store.queue.write { db in try body(db) }
    }
}

/// Carries an API error out of a GRDB transaction so it rolls back.
struct TransactionAbort: Error {
    var error: APIError
}
