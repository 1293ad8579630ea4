import JSON

extension SalesforceClient {
    /// An object's describe (fields, childRelationships, keyPrefix), fetched once per client.
    public func describe(_ type: String) async throws -> JSONObject {
        if let cached = await describeCache.value(for: type.lowercased()) { return cached }
        let response = try await send(OrgRequest(method: "GET", path: apiPath + "/sobjects/\(Self.pathComponent(type))/describe", kind: "describe"))
        let describe = try response.json().objectValue ?? JSONObject()
        await describeCache.store(describe, for: type.lowercased())
        return describe
    }

    /// The org's limits (`DailyApiRequests`, …).
    public func limits() async throws -> JSONObject {
        try await send(OrgRequest(method: "GET", path: apiPath + "/limits", kind: "limits")).json().objectValue ?? JSONObject()
    }

    /// Whether the org is a sandbox (`Organization.IsSandbox`), for the production-write guard.
    public func isSandbox() async throws -> Bool {
        for try await record in query("SELECT IsSandbox FROM Organization") {
            return record["IsSandbox"]?.boolValue ?? false
        }
        return false
    }
}

/// Describes already fetched, by lower-cased object name.
actor DescribeCache {
    private var entries: [String: JSONObject] = [:]

    func value(for key: String) -> JSONObject? { entries[key] }

    func store(_ describe: JSONObject, for key: String) { entries[key] = describe }
}
