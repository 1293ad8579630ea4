import Foundation
import GRDB
import JSON

/// `/sobjects`: global and per-object describe, record CRUD, upsert by external id, and the
/// `updated` / `deleted` change feeds.
extension OrgEngine {
    func sobjects(_ request: EmulatorRequest, version: String, parts: [String]) throws(APIError) -> EmulatorResponse {
        if parts.isEmpty {
            guard request.method == "GET" else { return .error(.notFound) }
            return .json(200, globalDescribe(version: version))
        }
        let object = try object(named: parts[0])
        switch (request.method, parts.count) {
        case ("GET", 1):
            return .json(200, ["objectDescribe": describeSummary(object, version: version), "recentItems": []])
        case ("POST", 1):
            guard let body = try request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
            let id = try transaction { db throws(APIError) in try createRecord(db, object: object, input: body) }
            return .json(201, ["id": .string(id), "success": true, "errors": []],
                         headers: [("Location", "/services/data/v\(version)/sobjects/\(object.name)/\(id)")])
        case ("POST", 2) where parts[1].lowercased() == "id":
            // Insert keyed on Id (v37+): a create whose body has no Id.
            guard let body = try request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
            let id = try transaction { db throws(APIError) in try createRecord(db, object: object, input: body) }
            return .json(201, ["id": .string(id), "success": true, "errors": []],
                         headers: [("Location", "/services/data/v\(version)/sobjects/\(object.name)/\(id)")])
        case ("GET", 2) where parts[1] == "describe":
            return .json(200, describe(object, version: version))
        case ("GET", 2) where parts[1] == "updated" || parts[1] == "deleted":
            return try changes(object, kind: parts[1], request: request)
        case ("GET", 2):
            let record = try transaction { db throws(APIError) in try existingRecord(db, object: object, id: parts[1]) }
            let fields = request.query["fields"].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            if let fields {
                for name in fields where object.field(name) == nil {
                    throw APIError(400, "INVALID_FIELD", "No such column '\(name)' on entity '\(object.name)'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.")
                }
            }
            return .json(200, recordJSON(record, version: version, fields: fields.map { ["Id"] + $0 }))
        case ("PATCH", 2):
            guard let body = try request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
            try transaction { db throws(APIError) in try updateRecord(db, object: object, id: parts[1], input: body) }
            return .noContent()
        case ("DELETE", 2):
            try transaction { db throws(APIError) in try deleteRecord(db, object: object, id: parts[1]) }
            return .noContent()
        case ("GET", 3):
            guard let field = object.field(parts[1]), field.idLookup else { throw APIError.notFound }
            let record = try transaction { db throws(APIError) -> StoredRecord in
                let ids = (try? lookups.ids(db, type: object.name, field: field.name, equalTo: parts[2], limit: 10)) ?? []
                if ids.count > 1 {
                    throw APIError(300, "MULTIPLE_CHOICES", ids.map { "/services/data/v\(version)/sobjects/\(object.name)/\($0)" }.joined(separator: ","))
                }
                guard let id = ids.first else { throw APIError.notFound }
                return try existingRecord(db, object: object, id: id)
            }
            return .json(200, recordJSON(record, version: version))
        case ("PATCH", 3), ("POST", 3):
            guard let body = try request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
            let result = try transaction { db throws(APIError) in
                try upsertRecord(db, object: object, fieldName: parts[1], value: parts[2], input: body, version: version)
            }
            if request.query["updateOnly"] == "true" && result.created {
                throw APIError.notFound
            }
            return .json(result.created ? 201 : 200, ["id": .string(result.id), "success": true, "errors": [], "created": .bool(result.created)],
                         headers: result.created ? [("Location", "/services/data/v\(version)/sobjects/\(object.name)/\(result.id)")] : [])
        case ("DELETE", 3):
            guard let field = object.field(parts[1]), field.idLookup else { throw APIError.notFound }
            try transaction { db throws(APIError) in
                let ids = (try? lookups.ids(db, type: object.name, field: field.name, equalTo: parts[2], limit: 2)) ?? []
                guard ids.count == 1 else { throw ids.isEmpty ? APIError.notFound : APIError(300, "MULTIPLE_CHOICES", "more than one record") }
                try deleteRecord(db, object: object, id: ids[0])
            }
            return .noContent()
        default:
            return .error(.notFound)
        }
    }

    /// `GET /sobjects/{T}/updated|deleted?start=…&end=…`.
    func changes(_ object: ObjectSchema, kind: String, request: EmulatorRequest) throws(APIError) -> EmulatorResponse {
        guard let startText = request.query["start"], let endText = request.query["end"],
              let start = SalesforceTime.parse(startText), let end = SalesforceTime.parse(endText) else {
            throw APIError(400, "INVALID_QUERY_FILTER_OPERATOR", "start and end must be date-times such as 2024-01-31T00:00:00+00:00")
        }
        let records = (try? read { db in try RecordStore.fetchAll(db, type: object.name, includeDeleted: true) }) ?? []
        let inRange = records.filter { $0.systemModstamp >= start && $0.systemModstamp <= end }
        if kind == "updated" {
            return .json(200, ["ids": .array(inRange.filter { !$0.isDeleted }.map { .string($0.id) }),
                               "latestDateCovered": .string(SalesforceTime.format(min(end, clock.now())))])
        }
        return .json(200, [
            "deletedRecords": .array(inRange.filter(\.isDeleted).map { ["id": .string($0.id), "deletedDate": .string(SalesforceTime.format($0.systemModstamp))] }),
            "earliestDateAvailable": .string(SalesforceTime.format(start)),
            "latestDateCovered": .string(SalesforceTime.format(min(end, clock.now()))),
        ])
    }

    func globalDescribe(version: String) -> JSONValue {
        ["encoding": "UTF-8", "maxBatchSize": 200,
         "sobjects": .array(schema.objects.filter { !$0.tooling }.map { describeSummary($0, version: version) })]
    }

    func describeSummary(_ object: ObjectSchema, version: String) -> JSONValue {
        let base = "/services/data/v\(version)/sobjects/\(object.name)"
        let writable = !Self.readOnlyObjects.contains(object.name)
        return [
            "name": .string(object.name), "label": .string(object.label), "labelPlural": .string(object.labelPlural),
            "keyPrefix": .string(object.keyPrefix), "custom": .bool(object.custom), "createable": .bool(writable),
            "updateable": .bool(writable), "deletable": .bool(writable), "queryable": true, "undeletable": .bool(writable),
            // The rest of what an org's global describe lists for every object.
            "activateable": false, "customSetting": false, "deepCloneable": false, "deprecatedAndHidden": false, "feedEnabled": false,
            "hasSubtypes": false, "isInterface": false, "isSubtype": false, "layoutable": .bool(writable), "mergeable": false,
            "mruEnabled": .bool(writable), "replicateable": .bool(writable), "retrieveable": true, "searchable": .bool(writable),
            "triggerable": .bool(writable), "associateEntityType": .null, "associateParentEntity": .null,
            "urls": ["sobject": .string(base), "describe": .string(base + "/describe"), "rowTemplate": .string(base + "/{ID}")],
        ]
    }

    /// Every object has the Master record type; the first of its own (if any) is the default.
    func recordTypeInfos(_ object: ObjectSchema, version: String) -> [JSONValue] {
        func info(id: String, developerName: String, name: String, isDefault: Bool, master: Bool) -> JSONValue {
            ["active": true, "available": true, "defaultRecordTypeMapping": .bool(isDefault), "developerName": .string(developerName),
             "master": .bool(master), "name": .string(name), "recordTypeId": .string(id),
             "urls": ["layout": .string("/services/data/v\(version)/sobjects/\(object.name)/describe/layouts/\(id)")]]
        }
        return object.recordTypes.enumerated().map { offset, recordType in
            info(id: recordType.id, developerName: recordType.developerName, name: recordType.name, isDefault: offset == 0, master: false)
        } + [info(id: ObjectSchema.masterRecordTypeId, developerName: "Master", name: "Master", isDefault: object.recordTypes.isEmpty, master: true)]
    }

    func describe(_ object: ObjectSchema, version: String) -> JSONValue {
        guard case .object(var output) = describeSummary(object, version: version) else { return .null }
        output["fields"] = .array(object.fields.map { field in
            var entry = JSONObject()
            entry["name"] = .string(field.name)
            entry["label"] = .string(field.label)
            entry["type"] = .string(field.type.rawValue)
            entry["soapType"] = .string(field.type.soapType)
            entry["length"] = .integer(Int64(field.length))
            entry["precision"] = .integer(Int64(field.precision))
            entry["scale"] = .integer(Int64(field.scale))
            entry["nillable"] = .bool(field.nillable)
            entry["createable"] = .bool(field.createable)
            entry["updateable"] = .bool(field.updateable)
            entry["unique"] = .bool(field.unique)
            entry["externalId"] = .bool(field.externalId)
            entry["idLookup"] = .bool(field.idLookup)
            entry["defaultedOnCreate"] = .bool(field.defaultedOnCreate)
            entry["defaultValue"] = field.defaultValue ?? .null
            entry["custom"] = .bool(field.custom)
            entry["calculated"] = false
            entry["nameField"] = .bool(field.name == "Name")
            entry["compoundFieldName"] = object.fields.first { $0.compound.contains(field.name) }.map { .string($0.name) } ?? .null
            // A long text area cannot be filtered, sorted, grouped or aggregated on, as in an org.
            let long = field.type == .textarea && field.length > 255
            entry["filterable"] = .bool(!long)
            entry["sortable"] = .bool(!long)
            entry["groupable"] = .bool(!long)
            entry["aggregatable"] = .bool(!long)
            if field.type == .textarea { entry["extraTypeInfo"] = "plaintextarea" }
            entry["restrictedPicklist"] = .bool(field.restrictedPicklist)
            entry["picklistValues"] = .array(field.picklistValues.map { value in
                ["active": true, "defaultValue": false, "label": .string(value), "validFor": .null, "value": .string(value)]
            })
            entry["referenceTo"] = .array(field.referenceTargets.map(JSONValue.string))
            entry["polymorphicForeignKey"] = .bool(field.referenceTargets.count > 1)
            entry["relationshipName"] = field.relationshipName.map(JSONValue.string) ?? .null
            entry["relationshipOrder"] = field.masterDetail ? 0 : .null
            entry["cascadeDelete"] = .bool(field.cascadeDelete)
            entry["restrictedDelete"] = .bool(field.restrictedDelete)
            entry["writeRequiresMasterRead"] = false
            return .object(entry)
        })
        output["recordTypeInfos"] = .array(recordTypeInfos(object, version: version))
        output["childRelationships"] = .array(object.childRelationships.map { relationship in
            ["cascadeDelete": .bool(relationship.cascadeDelete), "childSObject": .string(relationship.childSObject),
             "deprecatedAndHidden": false, "field": .string(relationship.field),
             "relationshipName": relationship.relationshipName.map(JSONValue.string) ?? .null,
             "restrictedDelete": .bool(relationship.restrictedDelete)]
        })
        return .object(output)
    }
}
