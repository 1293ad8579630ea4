import Foundation
import JSON

/// Results of a single-record write.
public struct SaveResult: Sendable, Equatable {
    public var id: String?
    public var success: Bool
    /// Upserts: whether the record was created.
    public var created: Bool?
    public var errors: [OrgAPIError]

    /// Reads one entry of a Collections / Composite / REST result.
    public init(json: JSONValue) {
        id = json["id"]?.stringValue
        success = json["success"]?.boolValue ?? false
        created = json["created"]?.boolValue
        errors = (json["errors"]?.arrayValue ?? []).map { OrgAPIError(status: 400, body: $0, fallback: "record error") }
    }

    public init(id: String?, success: Bool, created: Bool? = nil, errors: [OrgAPIError] = []) {
        self.id = id
        self.success = success
        self.created = created
        self.errors = errors
    }
}

/// Building request paths.
public enum OrgPath {
    /// Path-safe form of a URL component (an id, an external id value).
    public static func component(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

extension OrgClient {
    /// Creates a record; returns its id.
    public func create(_ type: String, _ fields: JSONObject) async throws -> String {
        let response = try await send(.json("POST", apiPath + "/sobjects/\(OrgPath.component(type))", .object(fields), kind: "sobject"))
        guard let id = try response.json()["id"]?.stringValue else { throw OrgClientError.invalidResponse("create \(type): no id in the answer") }
        return id
    }

    /// Reads a record (all fields, or the named ones).
    public func retrieve(_ type: String, id: String, fields: [String]? = nil) async throws -> JSONObject {
        let query = fields.map { [("fields", $0.joined(separator: ","))] } ?? []
        let response = try await send(OrgRequest(method: "GET", path: apiPath + "/sobjects/\(OrgPath.component(type))/\(OrgPath.component(id))",
                                                 query: query, kind: "sobject"))
        return try response.json().objectValue ?? JSONObject()
    }

    /// Updates the given fields of a record.
    public func update(_ type: String, id: String, _ fields: JSONObject) async throws {
        _ = try await send(.json("PATCH", apiPath + "/sobjects/\(OrgPath.component(type))/\(OrgPath.component(id))", .object(fields), kind: "sobject"))
    }

    /// Deletes a record.
    public func delete(_ type: String, id: String) async throws {
        _ = try await send(OrgRequest(method: "DELETE", path: apiPath + "/sobjects/\(OrgPath.component(type))/\(OrgPath.component(id))", kind: "sobject"))
    }

    /// Upserts on an external id field; returns the id and whether it was created.
    public func upsert(_ type: String, externalIdField: String, value: String, _ fields: JSONObject) async throws -> (id: String, created: Bool) {
        let path = apiPath + "/sobjects/\(OrgPath.component(type))/\(OrgPath.component(externalIdField))/\(OrgPath.component(value))"
        let response = try await send(.json("PATCH", path, .object(fields), kind: "sobject"))
        let json = try response.json()
        guard let id = json["id"]?.stringValue else { throw OrgClientError.invalidResponse("upsert \(type): no id in the answer") }
        return (id, json["created"]?.boolValue ?? (response.status == 201))
    }
}
