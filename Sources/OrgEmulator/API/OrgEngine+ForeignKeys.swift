import GRDB
import JSON

/// Parents named by a key instead of an id, as an org resolves them when it writes a record:
/// `"Account": {"External_Id__c": "A-1"}` in a body sets `AccountId` to the one live Account
/// whose `External_Id__c` is `A-1` (an external id or `idLookup` field, compared without case).
extension OrgEngine {
    /// `input` with each relationship object replaced by the id it names; INVALID_FIELD worded as
    /// the org words it when the key names no record, several, or is no key at all.
    func resolvingForeignKeys(_ db: Database, object: ObjectSchema, input: JSONObject) throws(APIError) -> JSONObject {
        guard input.contains(where: { $0.key != "attributes" && $0.value.objectValue != nil }) else { return input }
        var output = input
        for (name, value) in input where name != "attributes" {
            guard case .object(let nested) = value else { continue }
            guard let reference = object.relationship(name) else { continue }
            let type = nested["attributes"]?["type"]?.stringValue ?? reference.referenceTo ?? ""
            guard let parent = schema.object(type), reference.referenceTargets.isEmpty || reference.referenceTargets.contains(parent.name) else {
                throw APIError.invalidField("Invalid type: \(type) for the relationship \(name) on \(object.name)", fields: [reference.name])
            }
            let keys = nested.keys.filter { $0 != "attributes" }
            guard keys.count == 1, let spelled = keys.first else {
                throw APIError.invalidField("More than 1 field provided in an external foreign key reference in entity: \(parent.name)", fields: [])
            }
            guard let field = parent.field(spelled), field.externalId || field.idLookup else {
                throw APIError.invalidField("Provided external ID field does not exist or is not accessible: \(spelled)", fields: [reference.name])
            }
            let key: String
            switch nested[spelled] ?? .null {
            case .string(let text): key = text
            case .integer(let number): key = String(number)
            case .double(let number): key = String(number)
            default: throw APIError.invalidField("Foreign key external ID: null not found for field \(spelled) in entity \(parent.name)", fields: [reference.name])
            }
            let ids = (try? lookups.ids(db, type: parent.name, field: field.name, equalTo: key, limit: 2)) ?? []
            guard ids.count == 1 else {
                let what = ids.isEmpty ? "not found" : "matched more than one record"
                throw APIError.invalidField("Foreign key external ID: \(key) \(what) for field \(spelled) in entity \(parent.name)", fields: [reference.name])
            }
            output[name] = nil
            output[reference.name] = .string(ids[0])
        }
        return output
    }
}
