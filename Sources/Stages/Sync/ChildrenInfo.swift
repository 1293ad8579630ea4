import JSON

/// The `children` of a parent-children target: the child object and soup, the relationship name
/// (`sobjectTypePlural`, e.g. `Contacts`) and the field holding the parent's id.
public struct ChildrenInfo: Sendable, Equatable {
    public var sobjectType: String
    /// The child relationship name used in subqueries, e.g. `Contacts`.
    public var sobjectTypePlural: String
    public var soupName: String
    /// The child's field holding its parent's id, e.g. `AccountId`.
    public var parentIdFieldName: String
    public var idFieldName: String
    public var modificationDateFieldName: String
    public var externalIdFieldName: String?

    public init(sobjectType: String, sobjectTypePlural: String, soupName: String, parentIdFieldName: String,
                idFieldName: String = "Id", modificationDateFieldName: String = "LastModifiedDate", externalIdFieldName: String? = nil) {
        self.sobjectType = sobjectType
        self.sobjectTypePlural = sobjectTypePlural
        self.soupName = soupName
        self.parentIdFieldName = parentIdFieldName
        self.idFieldName = idFieldName
        self.modificationDateFieldName = modificationDateFieldName
        self.externalIdFieldName = externalIdFieldName
    }

    /// Reads Mobile SDK's `children` JSON; the relationship name defaults to the type plus `s`.
    public init(json: JSONObject) {
        let type = json["sobjectType"]?.stringValue ?? ""
        self.init(sobjectType: type, sobjectTypePlural: json["sobjectTypePlural"]?.stringValue ?? type + "s",
                  soupName: json["soupName"]?.stringValue ?? "", parentIdFieldName: json["parentIdFieldName"]?.stringValue ?? "",
                  idFieldName: json["idFieldName"]?.stringValue ?? "Id",
                  modificationDateFieldName: json["modificationDateFieldName"]?.stringValue ?? "LastModifiedDate",
                  externalIdFieldName: json["externalIdFieldName"]?.stringValue)
    }
}
