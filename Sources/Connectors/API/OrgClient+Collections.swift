import JSON

extension OrgClient {
    /// Creates up to 200 records (each with `attributes.type`); one result per record, in order.
    public func createRecords(_ records: [JSONObject], allOrNone: Bool = false) async throws -> [SaveResult] {
        try await collectionWrite("POST", apiPath + "/composite/sobjects", records: records, allOrNone: allOrNone, idempotent: false)
    }

    /// Updates up to 200 records (each with `attributes.type` and `Id`).
    public func updateRecords(_ records: [JSONObject], allOrNone: Bool = false) async throws -> [SaveResult] {
        try await collectionWrite("PATCH", apiPath + "/composite/sobjects", records: records, allOrNone: allOrNone, idempotent: true)
    }

    /// Upserts up to 200 records of one type on an external id field.
    public func upsertRecords(_ type: String, externalIdField: String, _ records: [JSONObject], allOrNone: Bool = false) async throws -> [SaveResult] {
        try await collectionWrite("PATCH", apiPath + "/composite/sobjects/\(OrgPath.component(type))/\(OrgPath.component(externalIdField))",
                                  records: records, allOrNone: allOrNone, idempotent: true)
    }

    /// Deletes up to 200 records by id.
    public func deleteRecords(ids: [String], allOrNone: Bool = false) async throws -> [SaveResult] {
        try Self.checkCollectionSize(ids.count)
        let response = try await send(OrgRequest(method: "DELETE", path: apiPath + "/composite/sobjects",
                                                 query: [("ids", ids.joined(separator: ",")), ("allOrNone", allOrNone ? "true" : "false")],
                                                 kind: "collections"))
        return (try response.json().arrayValue ?? []).map(SaveResult.init(json:))
    }

    /// Reads up to 200 records of one type; `nil` for ids that do not exist or are deleted.
    public func retrieveRecords(_ type: String, ids: [String], fields: [String]) async throws -> [JSONObject?] {
        try Self.checkCollectionSize(ids.count)
        let response = try await send(OrgRequest(method: "GET", path: apiPath + "/composite/sobjects/\(OrgPath.component(type))",
                                                 query: [("ids", ids.joined(separator: ",")), ("fields", fields.joined(separator: ","))],
                                                 kind: "collections"))
        return (try response.json().arrayValue ?? []).map(\.objectValue)
    }

    private func collectionWrite(_ method: String, _ path: String, records: [JSONObject], allOrNone: Bool, idempotent: Bool) async throws -> [SaveResult] {
        try Self.checkCollectionSize(records.count)
        let body: JSONValue = ["allOrNone": .bool(allOrNone), "records": .array(records.map(JSONValue.object))]
        let response = try await send(.json(method, path, body, kind: "collections", idempotent: idempotent))
        let results = (try response.json().arrayValue ?? []).map(SaveResult.init(json:))
        guard results.count == records.count else {
            throw OrgClientError.invalidResponse("Collections answered \(results.count) results for \(records.count) records")
        }
        return results
    }

    /// More than 200 records is refused before sending, as the org refuses it (`EXCEEDED_ID_LIMIT`).
    static func checkCollectionSize(_ count: Int) throws {
        guard count > OrgLimits.collection else { return }
        throw OrgAPIError(status: 400, errorCode: "EXCEEDED_ID_LIMIT",
                          message: "a Collections request holds at most \(OrgLimits.collection) records, not \(count); split the list")
    }
}
