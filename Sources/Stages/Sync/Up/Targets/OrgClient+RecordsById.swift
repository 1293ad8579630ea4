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
            for chunk in group.ids.chunked(into: OrgLimits.retrieveByBody) {
                subrequests.append((type, retrieveSubrequest(type, ids: chunk, fields: group.fields, referenceId: "r\(subrequests.count)")))
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

    /// A Composite subrequest reading `fields` of the `type` records among `ids` (up to 2,000;
    /// they may be references to earlier subrequests' results): an sObject Collections retrieve
    /// by request body.
    func retrieveSubrequest(_ type: String, ids: [String], fields: [String], referenceId: String) -> CompositeSubrequest {
        let body: JSONValue = ["ids": .array(ids.map(JSONValue.string)), "fields": .array(fields.map(JSONValue.string))]
        return CompositeSubrequest(method: "POST", url: apiPath + "/composite/sobjects/\(OrgPath.component(type))", referenceId: referenceId,
                                   body: body)
    }
}
