import Connectors
import JSON
import SOQL

/// A dry run's check of parents named by a key (`"Account": {"External_Id__c": "A-1"}`): the
/// relationship and the key field must exist, the field must be an external id or `idLookup`,
/// and exactly one org record must hold the key — read ahead for a whole page, in `IN` queries.
extension SyncUpRecordValidator {
    /// One parent reference of an operation: the parent object, the key field, the key.
    struct ParentReference: Hashable {
        var parent: String
        var field: String
        var key: String
    }

    /// Reads how many records hold each parent key the operations name, in as few queries as
    /// the query length allows; keys already read are not read again.
    func readParentKeys(_ operations: [SyncUpOperation]) async {
        var wanted: [String: [String: Set<String>]] = [:]
        for operation in operations where operation.kind != .delete {
            for (name, value) in operation.fields {
                guard case .object(let nested) = value, let reference = await reference(name, nested, in: operation.objectType),
                      parentKeyCounts[Self.parentKey(reference)] == nil else { continue }
                wanted[reference.parent, default: [:]][reference.field, default: []].insert(reference.key)
            }
        }
        for (parent, byField) in wanted {
            for (field, keys) in byField {
                var chunk: [String] = []
                var size = 0
                for key in keys.sorted() {
                    if !chunk.isEmpty && size + key.utf8.count + 3 > 4_000 {
                        await count(parent, field, chunk)
                        chunk.removeAll()
                        size = 0
                    }
                    chunk.append(key)
                    size += key.utf8.count + 3
                }
                if !chunk.isEmpty { await count(parent, field, chunk) }
            }
        }
    }

    /// Counts the `parent` records holding each of `keys` in `field` (without case, as the org compares).
    private func count(_ parent: String, _ field: String, _ keys: [String]) async {
        for key in keys { parentKeyCounts[Self.parentKey(ParentReference(parent: parent, field: field, key: key))] = 0 }
        guard var query = try? SOQLQuery(selecting: ["Id", field], from: parent), let filter = try? SOQLCondition.isIn(field, keys) else { return }
        query.addFilter(filter)
        do {
            for try await record in client.query(query) {
                guard let value = record[field], !value.isNull else { continue }
                let reference = ParentReference(parent: parent, field: field, key: value.stringValue ?? value.jsonString)
                parentKeyCounts[Self.parentKey(reference), default: 0] += 1
            }
        } catch {
            // Unread keys are checked no further: the live run's answer decides.
            for key in keys { parentKeyCounts[Self.parentKey(ParentReference(parent: parent, field: field, key: key))] = nil }
        }
    }

    /// The parent a nested value names, when `name` is a relationship of `type` and the value
    /// one key field with a value.
    private func reference(_ name: String, _ nested: JSONObject, in type: String) async -> ParentReference? {
        guard let describe = await describe(type),
              let field = (describe["fields"]?.arrayValue ?? []).first(where: { $0["relationshipName"]?.stringValue?.lowercased() == name.lowercased() }),
              let parent = nested["attributes"]?["type"]?.stringValue ?? field["referenceTo"]?.arrayValue?.first?.stringValue else { return nil }
        let keys = nested.keys.filter { $0 != "attributes" }
        guard keys.count == 1, let keyField = keys.first, let value = nested[keyField], !value.isNull else { return nil }
        return ParentReference(parent: parent, field: keyField, key: value.stringValue ?? value.jsonString)
    }

    static func parentKey(_ reference: ParentReference) -> String {
        "\(reference.parent.lowercased())\u{0}\(reference.field.lowercased())\u{0}\(reference.key.lowercased())"
    }

    /// What the org makes of a parent by key: the reference field it sets, or its refusal.
    enum ParentCheck {
        case sets(String)
        case refused(SyncUpError)
    }

    /// The reference field a parent by key sets (`AccountId`), or the org's refusal of it.
    func parentProblem(_ name: String, _ nested: JSONObject, fields: [String: JSONObject], operation: SyncUpOperation) async -> ParentCheck {
        func invalid(_ message: String) -> ParentCheck {
            .refused(SyncUpError(status: 400, code: "INVALID_FIELD", message: message, fields: [name]))
        }
        guard let field = fields.values.first(where: { $0["relationshipName"]?.stringValue?.lowercased() == name.lowercased() }),
              let fieldName = field["name"]?.stringValue else {
            return invalid("No such column '\(name)' on sobject of type \(operation.objectType)")
        }
        let keys = nested.keys.filter { $0 != "attributes" }
        guard keys.count == 1, let keyField = keys.first else {
            return invalid("More than 1 field provided in an external foreign key reference in entity: \(name)")
        }
        guard let reference = await reference(name, nested, in: operation.objectType), let parentDescribe = await describe(reference.parent) else {
            return invalid("Invalid foreign key reference \(name) on \(operation.objectType)")
        }
        let parentField = (parentDescribe["fields"]?.arrayValue ?? []).first { $0["name"]?.stringValue?.lowercased() == keyField.lowercased() }
        guard let parentField, parentField["externalId"]?.boolValue == true || parentField["idLookup"]?.boolValue == true else {
            return invalid("Provided external ID field does not exist or is not accessible: \(keyField)")
        }
        switch parentKeyCounts[Self.parentKey(reference)] {
        case 0? where attempts.isPlanned(parentKey: Self.parentKey(reference)):
            // Not in the org yet: planned by upsert earlier in this dry run.
            return .sets(fieldName)
        case 0?: return invalid("Foreign key external ID: \(reference.key) not found for field \(keyField) in entity \(reference.parent)")
        case let count? where count > 1:
            return invalid("Foreign key external ID: \(reference.key) matched more than one record for field \(keyField) in entity \(reference.parent)")
        default: return .sets(fieldName)
        }
    }
}
