import Connectors
import Foundation
import JSON
import SOQL
import Soups

/// Finds, from the org's describe, what a live run would have the org reject — unknown objects
/// and fields, fields that cannot be written, values too long, values outside a restricted
/// picklist, numbers, dates and email addresses the org cannot read, required fields missing or
/// empty on a create, parents that cannot be resolved — so a dry run
/// reports them as `reject`.
actor SyncUpRecordValidator {
    let client: any OrgClient
    private var describes: [String: JSONObject?] = [:]
    /// How many org records each parent key (``parentKey(_:_:_:)``) names, read ahead a page at a time.
    var parentKeyCounts: [String: Int] = [:]
    /// What the dry run has planned so far: `local_` ids (a graph's parents) and keys of upserts.
    let attempts: SyncUpAttempts

    init(client: any OrgClient, attempts: SyncUpAttempts = SyncUpAttempts(planning: true)) {
        self.client = client
        self.attempts = attempts
    }

    /// The describe of `type`, read once; `nil` when the org has no such object.
    func describe(_ type: String) async -> JSONObject? {
        if describes[type] == nil { describes[type] = .some(try? await client.describe(type)) }
        return describes[type] ?? nil
    }

    /// Why the org would refuse `operation`, or `nil`.
    func problem(_ operation: SyncUpOperation) async -> SyncUpError? {
        guard let describe = await describe(operation.objectType) else {
            return SyncUpError(status: 404, code: "NOT_FOUND", message: "the org has no sObject type \(operation.objectType)")
        }
        guard operation.kind != .delete else { return await deleteProblem(operation, describe: describe) }
        var fields: [String: JSONObject] = [:]
        for field in describe["fields"]?.arrayValue ?? [] {
            if let name = field["name"]?.stringValue, let object = field.objectValue { fields[name.lowercased()] = object }
        }
        let isCreate = operation.kind == .create || operation.kind == .upsert
        var referenced: [String] = []
        for (name, value) in operation.fields {
            if case .object(let reference) = value {
                switch await parentProblem(name, reference, fields: fields, operation: operation) {
                case .sets(let field): referenced.append(field.lowercased())
                case .refused(let problem): return problem
                }
                continue
            }
            guard let field = fields[name.lowercased()] else {
                return SyncUpError(status: 400, code: "INVALID_FIELD", message: "No such column '\(name)' on sobject of type \(operation.objectType)",
                                   fields: [name])
            }
            if field[isCreate ? "createable" : "updateable"]?.boolValue == false {
                return SyncUpError(status: 400, code: "INVALID_FIELD_FOR_INSERT_UPDATE",
                                   message: "Unable to \(isCreate ? "create" : "update") fields: \(name)", fields: [name])
            }
            guard let text = value.stringValue else { continue }
            if field["type"]?.stringValue == "reference", SyncField.isLocalId(text) {
                // A record planned in this dry run gets its id before this one is sent.
                if attempts.isPlanned(text) { continue }
                return SyncUpError(status: 400, code: SyncUpError.unresolvedReference,
                                   message: "\(name) refers to \(text), a local record that is not part of this sync up", fields: [name])
            }
            if let problem = Self.valueProblem(text, of: field, named: name) { return problem }
        }
        if isCreate {
            let linked = operation.parentLink.map { [$0.field.lowercased()] } ?? []
            // An empty text is no value: the org counts the field as missing.
            let given = operation.fields.filter { !$0.value.isNull && $0.value != .string("") }.map { $0.key.lowercased() }
            let sent = Set(given + linked + referenced + [operation.externalIdField?.lowercased() ?? ""])
            let missing = fields.values.filter { field in
                field["createable"]?.boolValue == true && field["nillable"]?.boolValue == false
                    && field["defaultedOnCreate"]?.boolValue != true && field["type"]?.stringValue != "boolean"
                    && !sent.contains((field["name"]?.stringValue ?? "").lowercased())
            }.compactMap { $0["name"]?.stringValue }.sorted()
            if !missing.isEmpty {
                return SyncUpError(status: 400, code: "REQUIRED_FIELD_MISSING", message: "Required fields are missing: [\(missing.joined(separator: ", "))]",
                                   fields: missing)
            }
            // A record planned by its external id may be named as a parent by that key.
            if let field = operation.externalIdField, let value = operation.externalIdValue {
                attempts.plan(parentKey: Self.parentKey(ParentReference(parent: operation.objectType, field: field, key: value)))
            }
        }
        return nil
    }

    /// Why the org would refuse `text` in `field` (`name` as sent): too long, not a number or a
    /// date, not an email address, not a value of a restricted picklist; `nil` when it fits.
    static func valueProblem(_ text: String, of field: JSONObject, named name: String) -> SyncUpError? {
        if let length = field["length"]?.integerValue, length > 0, text.count > length {
            return SyncUpError(status: 400, code: "STRING_TOO_LONG",
                               message: "\(field["label"]?.stringValue ?? name): data value too large: \(text.count) characters, the limit is \(length)",
                               fields: [name])
        }
        let type = field["type"]?.stringValue ?? ""
        let label = field["label"]?.stringValue ?? name
        if ["int", "double", "currency", "percent"].contains(type), !text.isEmpty,
           Double(text.trimmingCharacters(in: .whitespaces)) == nil {
            return SyncUpError(status: 400, code: "INVALID_TYPE_ON_FIELD_IN_RECORD", message: "\(label): value not of required type: \(text)", fields: [name])
        }
        if type == "date", !text.isEmpty, SOQLDate(parsing: String(text.prefix(10))) == nil {
            return SyncUpError(status: 400, code: "INVALID_TYPE_ON_FIELD_IN_RECORD", message: "\(label): value not of required type: \(text)", fields: [name])
        }
        // An address an org takes has one @, no spaces, and a dot in its domain.
        if type == "email", !text.isEmpty, text.range(of: #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#, options: .regularExpression) == nil {
            return SyncUpError(status: 400, code: "INVALID_EMAIL_ADDRESS", message: "\(label): invalid email address: \(text)", fields: [name])
        }
        if field["type"]?.stringValue == "picklist", field["restrictedPicklist"]?.boolValue == true {
            let allowed = (field["picklistValues"]?.arrayValue ?? []).compactMap { $0["value"]?.stringValue }
            if !allowed.contains(text) {
                return SyncUpError(status: 400, code: "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
                                   message: "\(field["label"]?.stringValue ?? name): bad value for restricted picklist field: \(text)", fields: [name])
            }
        }
        return nil
    }

    /// A delete the org refuses: children of a relationship that restricts deletes still point to
    /// the record (`DELETE_FAILED`, as the org answers it).
    private func deleteProblem(_ operation: SyncUpOperation, describe: JSONObject) async -> SyncUpError? {
        guard let id = operation.recordId, !SyncField.isLocalId(id) else { return nil }
        for relationship in describe["childRelationships"]?.arrayValue ?? [] where relationship["restrictedDelete"]?.boolValue == true {
            guard let child = relationship["childSObject"]?.stringValue, let field = relationship["field"]?.stringValue,
                  var query = try? SOQLQuery(selecting: ["Id"], from: child) else { continue }
            guard (try? query.addFilter(.compare(field, .equal, .string(id)))) != nil else { continue }
            query.limit = 5
            var children: [String] = []
            do {
                for try await record in client.query(query) { if let childId = record["Id"]?.stringValue { children.append(childId) } }
            } catch {
                continue
            }
            if !children.isEmpty {
                return SyncUpError(status: 400, code: "DELETE_FAILED",
                                   message: "Your attempt to delete \(id) could not be completed because it is associated with the following \(child) records: \(children.joined(separator: ", "))")
            }
        }
        return nil
    }
}
