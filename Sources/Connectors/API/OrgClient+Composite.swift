import JSON

/// One subrequest of a Composite or Graph request.
public struct CompositeSubrequest: Sendable {
    public var method: String
    /// From the instance root, e.g. `/services/data/v62.0/sobjects/Account`; may hold `@{ref.field}`.
    public var url: String
    public var referenceId: String
    public var body: JSONValue?

    public init(method: String, url: String, referenceId: String, body: JSONValue? = nil) {
        self.method = method
        self.url = url
        self.referenceId = referenceId
        self.body = body
    }

    var json: JSONValue {
        var object: JSONObject = ["method": .string(method), "url": .string(url), "referenceId": .string(referenceId)]
        if let body { object["body"] = body }
        return .object(object)
    }
}

/// One subresponse of a Composite or Graph request.
public struct CompositeSubresponse: Sendable {
    public var referenceId: String
    public var httpStatusCode: Int
    public var body: JSONValue

    /// Reads a `compositeResponse` array.
    static func list(_ value: JSONValue?) -> [CompositeSubresponse] {
        (value?.arrayValue ?? []).map { entry in
            CompositeSubresponse(referenceId: entry["referenceId"]?.stringValue ?? "",
                                 httpStatusCode: Int(entry["httpStatusCode"]?.integerValue ?? 0), body: entry["body"] ?? .null)
        }
    }

    /// The org's error, when the subrequest failed.
    public var error: OrgAPIError? {
        httpStatusCode >= 400 ? OrgAPIError(status: httpStatusCode, body: body, fallback: "HTTP \(httpStatusCode)") : nil
    }
}

extension OrgClient {
    /// Sends up to 25 subrequests as one Composite request.
    public func composite(_ subrequests: [CompositeSubrequest], allOrNone: Bool) async throws -> [CompositeSubresponse] {
        guard subrequests.count <= OrgLimits.composite else {
            throw OrgAPIError(status: 400, errorCode: "INVALID_BATCH_REQUEST",
                              message: "a Composite request holds at most \(OrgLimits.composite) subrequests, not \(subrequests.count); split the list")
        }
        let body: JSONValue = ["allOrNone": .bool(allOrNone), "compositeRequest": .array(subrequests.map(\.json))]
        let writes = subrequests.contains { $0.method != "GET" }
        let json = try await send(.json("POST", apiPath + "/composite", body, kind: "composite", idempotent: !writes)).json()
        return CompositeSubresponse.list(json["compositeResponse"])
    }

    /// Sends graphs (each its own transaction) as one Composite Graph request.
    /// - Returns: per graph id, whether it succeeded and its subresponses.
    public func graph(_ graphs: [(graphId: String, subrequests: [CompositeSubrequest])]) async throws
        -> [(graphId: String, isSuccessful: Bool, responses: [CompositeSubresponse])]
    {
        let body: JSONValue = ["graphs": .array(graphs.map { graph in
            ["graphId": .string(graph.graphId), "compositeRequest": .array(graph.subrequests.map(\.json))]
        })]
        let json = try await send(.json("POST", apiPath + "/composite/graph", body, kind: "graph")).json()
        return (json["graphs"]?.arrayValue ?? []).map { graph in
            (graph["graphId"]?.stringValue ?? "", graph["isSuccessful"]?.boolValue ?? false,
             CompositeSubresponse.list(graph["graphResponse"]?["compositeResponse"]))
        }
    }

    /// Creates a tree of records (all or none); returns reference id → new id, or the errors.
    public func tree(_ type: String, records: [JSONValue]) async throws -> (ids: [String: String], errors: [String: [OrgAPIError]]) {
        let request = OrgRequest.json("POST", apiPath + "/composite/tree/\(OrgPath.component(type))", ["records": .array(records)], kind: "tree")
        let response: OrgResponse
        do {
            response = try await send(request)
        } catch let error as OrgAPIError where error.body["hasErrors"] == true {
            var errors: [String: [OrgAPIError]] = [:]
            for result in error.body["results"]?.arrayValue ?? [] {
                errors[result["referenceId"]?.stringValue ?? ""] = (result["errors"]?.arrayValue ?? []).map {
                    OrgAPIError(status: 400, body: $0, fallback: "tree error")
                }
            }
            return ([:], errors)
        }
        var ids: [String: String] = [:]
        for result in try response.json()["results"]?.arrayValue ?? [] {
            if let reference = result["referenceId"]?.stringValue, let id = result["id"]?.stringValue { ids[reference] = id }
        }
        return (ids, [:])
    }
}
