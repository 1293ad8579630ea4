import Connectors
import Formats
import JSON

extension OrgClient {
    /// The records of `type` among `ids` that exist in the org, with `fields`, keyed by
    /// ``SalesforceId/key(_:)`` — read through sObject Collections retrieves of 200 ids, five to a
    /// Composite request (1,000 ids a request), the requests in flight together.
    func existingRecords(_ type: String, ids: [String], fields: [String]) async throws -> [String: JSONObject] {
        let path = apiPath + "/composite/sobjects/\(OrgPath.component(type))?fields=\(fields.map(OrgPath.component).joined(separator: ","))&ids="
        let requests = ids.chunked(into: OrgLimits.collection).enumerated().map { index, chunk in
            CompositeSubrequest(method: "GET", url: path + chunk.map(OrgPath.component).joined(separator: ","), referenceId: "r\(index)")
        }.chunked(into: 5)
        return try await withThrowingTaskGroup(of: [CompositeSubresponse].self) { group in
            for subrequests in requests {
                group.addTask { try await self.composite(subrequests, allOrNone: false) }
            }
            var found: [String: JSONObject] = [:]
            for try await responses in group {
                for response in responses {
                    guard (200..<300).contains(response.httpStatusCode) else {
                        throw OrgAPIError(status: response.httpStatusCode, body: response.body, fallback: "reading \(type) records by id")
                    }
                    for case let record? in (response.body.arrayValue ?? []).map(\.objectValue) {
                        found[SalesforceId.key(record["Id"])] = record
                    }
                }
            }
            return found
        }
    }
}
