import JSON

extension OrgClient {
    /// An object's describe (fields, childRelationships, keyPrefix), asked of the org each time;
    /// ``SalesforceClient`` keeps the answers for the life of the client.
    public func describe(_ type: String) async throws -> JSONObject {
        try await fetchDescribe(type)
    }

    /// Asks the org for an object's describe.
    public func fetchDescribe(_ type: String) async throws -> JSONObject {
        let response = try await send(OrgRequest(method: "GET", path: apiPath + "/sobjects/\(OrgPath.component(type))/describe", kind: "describe"))
        return try response.json().objectValue ?? JSONObject()
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

    /// The id of the user the client runs as (`user_id` of `/services/oauth2/userinfo`): the
    /// `CreatedById` of every record it creates.
    public func currentUserId() async throws -> String {
        let info = try await send(OrgRequest(method: "GET", path: "/services/oauth2/userinfo", kind: "auth")).json()
        guard let id = info["user_id"]?.stringValue, !id.isEmpty else {
            throw OrgClientError.invalidResponse("/services/oauth2/userinfo: no user_id in the answer")
        }
        return id
    }
}

extension SalesforceClient {
    /// An object's describe, fetched once per client.
    public func describe(_ type: String) async throws -> JSONObject {
        if let cached = await describeCache.value(for: type.lowercased()) { return cached }
        let describe = try await fetchDescribe(type)
        await describeCache.store(describe, for: type.lowercased())
        return describe
    }
}

/// Describes already fetched, by lower-cased object name.
actor DescribeCache {
    private var entries: [String: JSONObject] = [:]

    func value(for key: String) -> JSONObject? { entries[key] }

    func store(_ describe: JSONObject, for key: String) { entries[key] = describe }
}
