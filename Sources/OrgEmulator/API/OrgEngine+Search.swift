import Foundation
import GRDB
import JSON
import SOQL

/// `GET /search?q=FIND {…}`: SOSL over the stored records (``SOSLSearch``), answered as
/// `{"searchRecords": […]}` with each record's `attributes` and the fields `RETURNING` asks for.
extension OrgEngine {
    func search(_ request: EmulatorRequest, version: String, in outer: Database?) throws(APIError) -> EmulatorResponse {
        guard let text = request.query["q"], !text.isEmpty else {
            throw SOSLSearch.malformed("A search string has to be specified in the q parameter")
        }
        let search = try SOSLSearch(text)
        let returning = search.returning.isEmpty
            ? schema.objects.filter { !Self.readOnlyObjects.contains($0.name) && !$0.tooling }.map { SOSLSearch.Returning(object: $0.name, fields: nil, clauses: "") }
            : search.returning
        var found: [JSONValue] = []
        for item in returning where found.count < search.limit {
            guard let object = schema.object(item.object) else {
                throw APIError(400, "INVALID_TYPE", "sObject type '\(item.object)' is not supported.")
            }
            let searched = object.fields.filter { field in
                switch search.scope {
                case .all: return field.type.isText && field.type != .picklist && field.type != .multipicklist
                case .name: return field.name == "Name" || field.name == "FirstName" || field.name == "LastName"
                case .email: return field.type == .email
                case .phone: return field.type == .phone
                }
            }
            let records: [StoredRecord]
            do {
                records = try read(in: outer) { db in try RecordStore.fetchAll(db, type: object.name, includeDeleted: false) }
            } catch {
                throw APIError.unexpected(error)
            }
            let ids = records.filter { record in search.matches(searched.compactMap { record.fields[$0.name]?.stringValue }) }.map(\.id)
            guard !ids.isEmpty else { continue }
            let soql = "SELECT \(item.fields.flatMap { $0.isEmpty ? nil : $0 } ?? "Id") FROM \(object.name) \(item.clauses)"
            let plan: QueryPlan
            do {
                let query = try SOQL.parseQuery(soql).addingFilter(try .isIn("Id", ids))
                plan = try QueryPlan(query: query, text: soql, schema: schema)
            } catch {
                throw APIError(400, "MALFORMED_SEARCH", "RETURNING \(object.name): \(error.message)")
            }
            let matching = try matchingRecords(plan, includeDeleted: false, parentIds: nil, selecting: false, in: outer).0
            found += try shape(ids: matching.prefix(search.limit - found.count).map(\.id), plan: plan, version: version, in: outer)
        }
        return .json(200, ["searchRecords": .array(found)])
    }
}
