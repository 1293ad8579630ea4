import Connectors
import Formats
import JSON

extension OrgClient {
    /// The records of `type` among `ids` that exist in the org, with `fields`, keyed by
    /// ``SalesforceId/key(_:)``.
    func existingRecords(_ type: String, ids: [String], fields: [String]) async throws -> [String: JSONObject] {
        try await existingRecords([type: (ids, fields)])[type] ?? [:]
    }

    /// The records among `wanted`'s ids that exist in the org, with each object's fields, by object
    /// then by ``SalesforceId/key(_:)`` — read through sObject Collections retrieves by request
    /// body (up to 2,000 ids each), every object's packed five to a Composite request (10,000 ids a
    /// request), the requests in flight together.
    func existingRecords(_ wanted: [String: (ids: [String], fields: [String])]) async throws -> [String: [String: JSONObject]] {
        var subrequests: [(type: String, request: CompositeSubrequest)] = []
        for (type, group) in wanted.sorted(by: { $0.key < $1.key }) where !group.ids.isEmpty {
            let url = apiPath + "/composite/sobjects/\(OrgPath.component(type))"
            let fields = JSONValue.array(group.fields.map(JSONValue.string))
            for chunk in group.ids.chunked(into: OrgLimits.retrieveByBody) {
                let body: JSONValue = ["ids": .array(chunk.map(JSONValue.string)), "fields": fields]
                subrequests.append((type, CompositeSubrequest(method: "POST", url: url, referenceId: "r\(subrequests.count)", body: body)))
            }
        }
        return try await withThrowingTaskGroup(of: [(String, CompositeSubresponse)].self) { group in
            for requests in subrequests.chunked(into: OrgLimits.heavySubrequests) {
                group.addTask {
                    let responses = try await self.composite(requests.map(\.request), allOrNone: false)
                    return Array(zip(requests.map(\.type), responses))
                }
            }
            var found: [String: [String: JSONObject]] = [:]
            for try await responses in group {
                for (type, response) in responses {
                    guard (200..<300).contains(response.httpStatusCode) else {
                        throw OrgAPIError(status: response.httpStatusCode, body: response.body, fallback: "reading \(type) records by id")
                    }
                    for case let record? in (response.body.arrayValue ?? []).map(\.objectValue) {
                        found[type, default: [:]][SalesforceId.key(record["Id"])] = record
                    }
                }
            }
            return found
        }
    }
}
