import Foundation
import GRDB
import JSON

/// `/sobjects`: global and per-object describe, record CRUD, upsert by external id, and the
/// `updated` / `deleted` change feeds.
extension OrgEngine {
    /// `/sobjects` under `/services/data/vNN.N`: every route may be a Composite subrequest's.
    static let sobjectRoutes: [Route] = [
        Route("GET", "sobjects", .describe, inComposite: true) { engine, r throws(APIError) in
            .json(200, engine.globalDescribe(version: r.version))
        },
        Route("GET", "sobjects/:type", .describe, inComposite: true) { engine, r throws(APIError) in
            .json(200, ["objectDescribe": engine.describeSummary(try engine.object(named: r["type"]), version: r.version), "recentItems": []])
        },
        Route("POST", "sobjects/:type", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            try engine.createRecord(r)
        },
        Route("POST", "sobjects/:type/:id", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            // Insert keyed on Id (v37+): a create whose body has no Id.
            _ = try engine.object(named: r["type"])
            guard r["id"].lowercased() == "id" else { throw APIError.notFound }
            return try engine.createRecord(r)
        },
        Route("GET", "sobjects/:type/describe", .describe, inComposite: true) { engine, r throws(APIError) in
            .json(200, engine.describe(try engine.object(named: r["type"]), version: r.version))
        },
        Route("GET", "sobjects/:type/updated", .changes, inComposite: true) { engine, r throws(APIError) in
            try engine.changes(try engine.object(named: r["type"]), kind: "updated", request: r.request, in: r.database)
        },
        Route("GET", "sobjects/:type/deleted", .changes, inComposite: true) { engine, r throws(APIError) in
            try engine.changes(try engine.object(named: r["type"]), kind: "deleted", request: r.request, in: r.database)
        },
        Route("GET", "sobjects/:type/:id", .sobject, inComposite: true) { engine, r throws(APIError) in
            try engine.retrieveRecord(r)
        },
        Route("PATCH", "sobjects/:type/:id", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            let object = try engine.object(named: r["type"])
            guard let body = try r.request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
            try engine.transaction(in: r.database) { db throws(APIError) in try engine.updateRecord(db, object: object, id: r["id"], input: body) }
            return .noContent()
        },
        Route("DELETE", "sobjects/:type/:id", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            let object = try engine.object(named: r["type"])
            try engine.transaction(in: r.database) { db throws(APIError) in try engine.deleteRecord(db, object: object, id: r["id"]) }
            return .noContent()
        },
        Route("GET", "sobjects/:type/:field/:value", .sobject, inComposite: true) { engine, r throws(APIError) in
            try engine.retrieveRecordByField(r)
        },
        Route("PATCH", "sobjects/:type/:field/:value", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            try engine.upsertRecord(r)
        },
        Route("POST", "sobjects/:type/:field/:value", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            try engine.upsertRecord(r)
        },
        Route("DELETE", "sobjects/:type/:field/:value", .sobject, writes: .always, inComposite: true) { engine, r throws(APIError) in
            let object = try engine.object(named: r["type"])
            guard let field = object.field(r["field"]), field.idLookup else { throw APIError.notFound }
            try engine.transaction(in: r.database) { db throws(APIError) in
                let ids = (try? engine.lookups.ids(db, type: object.name, field: field.name, equalTo: r["value"], limit: 2)) ?? []
                guard ids.count == 1 else { throw ids.isEmpty ? APIError.notFound : APIError(300, "MULTIPLE_CHOICES", "more than one record") }
                try engine.deleteRecord(db, object: object, id: ids[0])
            }
            return .noContent()
        },
        Route(nil, "sobjects/**", .sobject, writes: .unlessGET, inComposite: true) { _, _ throws(APIError) in
            throw APIError.notFound
        },
    ]

    /// `POST /sobjects/{T}` (or `/sobjects/{T}/Id`): a record created from the body.
    func createRecord(_ r: RoutedRequest) throws(APIError) -> EmulatorResponse {
        let object = try object(named: r["type"])
        guard let body = try r.request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
        let id = try transaction(in: r.database) { db throws(APIError) in try createRecord(db, object: object, input: body) }
        return .json(201, ["id": .string(id), "success": true, "errors": []],
                     headers: [("Location", "/services/data/v\(r.version)/sobjects/\(object.name)/\(id)")])
    }

    /// `GET /sobjects/{T}/{id}[?fields=…]`.
    func retrieveRecord(_ r: RoutedRequest) throws(APIError) -> EmulatorResponse {
        let object = try object(named: r["type"])
        let record = try transaction(in: r.database) { db throws(APIError) in try existingRecord(db, object: object, id: r["id"]) }
        let fields = r.request.query["fields"].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if let fields {
            for name in fields where object.field(name) == nil {
                throw APIError(400, "INVALID_FIELD", "No such column '\(name)' on entity '\(object.name)'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.")
            }
        }
        return .json(200, recordJSON(record, version: r.version, fields: fields.map { ["Id"] + $0 }))
    }

    /// `GET /sobjects/{T}/{idLookup field}/{value}`: 300 MULTIPLE_CHOICES when several match.
    func retrieveRecordByField(_ r: RoutedRequest) throws(APIError) -> EmulatorResponse {
        let object = try object(named: r["type"])
        guard let field = object.field(r["field"]), field.idLookup else { throw APIError.notFound }
        let record = try transaction(in: r.database) { db throws(APIError) -> StoredRecord in
            let ids = (try? lookups.ids(db, type: object.name, field: field.name, equalTo: r["value"], limit: 10)) ?? []
            if ids.count > 1 {
                throw APIError(300, "MULTIPLE_CHOICES", ids.map { "/services/data/v\(r.version)/sobjects/\(object.name)/\($0)" }.joined(separator: ","))
            }
            guard let id = ids.first else { throw APIError.notFound }
            return try existingRecord(db, object: object, id: id)
        }
        return .json(200, recordJSON(record, version: r.version))
    }

    /// `PATCH /sobjects/{T}/{external id field}/{value}` (or POST): created or updated;
    /// `updateOnly=true` refuses a create.
    func upsertRecord(_ r: RoutedRequest) throws(APIError) -> EmulatorResponse {
        let object = try object(named: r["type"])
        guard let body = try r.request.jsonBody().objectValue else { throw APIError.badJSON("Expected a JSON object") }
        let result = try transaction(in: r.database) { db throws(APIError) in
            try upsertRecord(db, object: object, fieldName: r["field"], value: r["value"], input: body, version: r.version)
        }
        if r.request.query["updateOnly"] == "true" && result.created {
            throw APIError.notFound
        }
        return .json(result.created ? 201 : 200, ["id": .string(result.id), "success": true, "errors": [], "created": .bool(result.created)],
                     headers: result.created ? [("Location", "/services/data/v\(r.version)/sobjects/\(object.name)/\(result.id)")] : [])
    }

    /// `GET /sobjects/{T}/updated|deleted?start=…&end=…`.
    func changes(_ object: ObjectSchema, kind: String, request: EmulatorRequest, in outer: Database?) throws(APIError) -> EmulatorResponse {
        guard let startText = request.query["start"], let endText = request.query["end"],
              let start = SalesforceTime.parse(startText), let end = SalesforceTime.parse(endText) else {
            throw APIError(400, "INVALID_QUERY_FILTER_OPERATOR", "start and end must be date-times such as 2024-01-31T00:00:00+00:00")
        }
        let records = (try? read(in: outer) { db in try RecordStore.fetchAll(db, type: object.name, includeDeleted: true) }) ?? []
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
