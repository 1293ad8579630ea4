import JSON

/// The `parent` of a parent-children target: which object and soup, and its id and date fields.
public struct ParentInfo: Sendable, Equatable {
    public var sobjectType: String
    public var soupName: String
    public var idFieldName: String
    public var modificationDateFieldName: String
    public var externalIdFieldName: String?

    public init(sobjectType: String, soupName: String, idFieldName: String = "Id",
                modificationDateFieldName: String = "LastModifiedDate", externalIdFieldName: String? = nil) {
        self.sobjectType = sobjectType
        self.soupName = soupName
        self.idFieldName = idFieldName
        self.modificationDateFieldName = modificationDateFieldName
        self.externalIdFieldName = externalIdFieldName
    }

    /// Reads Mobile SDK's `parent` JSON (the loader has checked its required keys).
    public init(json: JSONObject) {
        self.init(sobjectType: json["sobjectType"]?.stringValue ?? "", soupName: json["soupName"]?.stringValue ?? "",
                  idFieldName: json["idFieldName"]?.stringValue ?? "Id",
                  modificationDateFieldName: json["modificationDateFieldName"]?.stringValue ?? "LastModifiedDate",
                  externalIdFieldName: json["externalIdFieldName"]?.stringValue)
    }
}
