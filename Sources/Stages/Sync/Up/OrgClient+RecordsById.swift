import Connectors
import JSON

extension OrgClient {
    /// The records of `type` among `ids` that exist in the org, with `fields`, keyed by
    /// ``RecordIdKey`` — read through sObject Collections, 200 ids a request.
    func existingRecords(_ type: String, ids: [String], fields: [String]) async throws -> [String: JSONObject] {
        var found: [String: JSONObject] = [:]
        for chunk in ids.chunked(into: OrgLimits.collection) {
            for case let record? in try await retrieveRecords(type, ids: chunk, fields: fields) {
                found[RecordIdKey.of(record["Id"])] = record
            }
        }
        return found
    }
}
