import Connectors
import Formats
import JSON

extension OrgClient {
    /// The records of `type` among `ids` that exist in the org, with `fields`, keyed by
    /// ``SalesforceId/key(_:)`` — read through sObject Collections, 200 ids a request.
    func existingRecords(_ type: String, ids: [String], fields: [String]) async throws -> [String: JSONObject] {
        var found: [String: JSONObject] = [:]
        for chunk in ids.chunked(into: OrgLimits.collection) {
            for case let record? in try await retrieveRecords(type, ids: chunk, fields: fields) {
                found[SalesforceId.key(record["Id"])] = record
            }
        }
        return found
    }
}
