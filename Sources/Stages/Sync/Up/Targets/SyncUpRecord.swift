import JSON
import Soups

/// A soup entry a sync up considers, with the target's description of it: its object type, id
/// and date fields, the fields it may send, and the operation its flags call for.
public struct SyncUpRecord: Sendable {
    /// What the local flags ask for, by Mobile Sync's precedence (deleted > created > updated).
    public enum Action: Sendable, Equatable {
        /// Clean: nothing to send.
        case none
        case create
        case update
        case delete
        /// Created and deleted locally: removed from the soup without a request.
        case discard
    }

    public var soup: String
    public var entry: JSONObject
    /// `nil` when the record carries no object type (a record error, not a crash).
    public var objectType: String?
    public var idField: String
    public var modificationDateField: String
    public var externalIdField: String?
    /// The fields a create may send (`nil`: every data field).
    public var createFields: [String]?
    /// The fields an update may send (`nil`: every data field).
    public var updateFields: [String]?

    public init(soup: String, entry: JSONObject, objectType: String?, idField: String, modificationDateField: String,
                externalIdField: String?, createFields: [String]?, updateFields: [String]?) {
        self.soup = soup
        self.entry = entry
        self.objectType = objectType
        self.idField = idField
        self.modificationDateField = modificationDateField
        self.externalIdField = externalIdField
        self.createFields = createFields
        self.updateFields = updateFields
    }

    public var entryId: Int64 { entry.soupEntryId ?? 0 }

    /// The record's id: a server id, a `local_` id, or `nil`.
    public var id: String? {
        get { entry[idField]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        set { entry[idField] = newValue.map(JSONValue.string) ?? .null }
    }

    /// `true` when the record has an id from the org.
    public var hasServerId: Bool { id.map { !SyncField.isLocalId($0) } ?? false }

    public var isDirty: Bool { entry.isDirty }
    /// The error code of the record's last failed sync up (`__last_error__`), if any.
    public var lastErrorCode: String? {
        guard let text = entry[SyncField.lastError]?.stringValue, let error = try? JSONParser.parse(text) else { return nil }
        return error["errorCode"]?.stringValue
    }
    public var isLocallyCreated: Bool { entry[SyncField.locallyCreated]?.isTruthy ?? false }
    public var isLocallyUpdated: Bool { entry[SyncField.locallyUpdated]?.isTruthy ?? false }
    public var isLocallyDeleted: Bool { entry[SyncField.locallyDeleted]?.isTruthy ?? false }

    /// The operation the flags call for. A record flagged created that already has a server id is
    /// an update (its create was confirmed); one flagged updated or deleted without a server id
    /// is a create, or nothing to delete.
    public var action: Action {
        guard isDirty else { return .none }
        if isLocallyDeleted { return isLocallyCreated || !hasServerId ? .discard : .delete }
        if isLocallyCreated { return hasServerId ? .update : .create }
        if isLocallyUpdated { return hasServerId ? .update : .create }
        return hasServerId ? .update : .create
    }

    /// The external id value to upsert on: set, and not a `local_` placeholder.
    public var externalIdValue: String? {
        guard let field = externalIdField, let value = entry[field], !value.isNull else { return nil }
        let text = value.stringValue ?? value.jsonString
        return text.isEmpty || SyncField.isLocalId(text) ? nil : text
    }

    /// Sets the flags to "created" (so the record is sent as a new one), as Mobile Sync does when
    /// OVERWRITE meets a record deleted on the server.
    public mutating func flagForRecreation() {
        entry[SyncField.local] = .bool(true)
        entry[SyncField.locallyCreated] = .bool(true)
        entry[SyncField.locallyDeleted] = .bool(false)
        if hasServerId { entry[idField] = .string(SyncField.localIdPrefix + "recreate_\(entryId)") }
    }

    /// The fields to send for `action` (create or update): the target's list, else every data
    /// field; never the id or date field, system fields, nested objects or absent keys. A parent
    /// named by an external id or `idLookup` field — `Account.External_Id__c` in the list (read
    /// from that key or from the nested `Account` object), or a key so spelled in the record — is
    /// sent as the org resolves it at write time: `"Account": {"External_Id__c": "A-1"}` (a Bulk
    /// upload makes it an `Account.External_Id__c` column). A blank key sends no reference.
    public func payload(for action: Action) -> JSONObject {
        let list = action == .create ? createFields : updateFields
        var fields = JSONObject()
        fields.reserveCapacity((list?.count ?? entry.count) + 1)
        if let list {
            for name in list {
                if let (relationship, key) = Self.parentReference(name) {
                    if let value = entry[name] ?? entry[relationship]?.objectValue?[key] { Self.addReference(&fields, relationship, key, value) }
                } else if entry.contains(name) {
                    fields[name] = entry[name]
                }
            }
        } else {
            for (name, value) in entry.dataFields {
                if let (relationship, key) = Self.parentReference(name) {
                    if Self.isSentUnlisted(value) { Self.addReference(&fields, relationship, key, value) }
                } else if Self.isSentUnlisted(value) {
                    fields[name] = value
                }
            }
        }
        fields[idField] = nil
        fields[modificationDateField] = nil
        for name in Self.systemFields { fields[name] = nil }
        return fields
    }

    /// `("Account", "External_Id__c")` for `Account.External_Id__c`: a parent by one of its keys.
    static func parentReference(_ name: String) -> (relationship: String, key: String)? {
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex else { return nil }
        let key = name[name.index(after: dot)...]
        guard !key.isEmpty, !key.contains(".") else { return nil }
        return (String(name[..<dot]), String(key))
    }

    private static func addReference(_ fields: inout JSONObject, _ relationship: String, _ key: String, _ value: JSONValue) {
        guard !value.isNull, value != .string("") else { return }
        fields[relationship] = .object(JSONObject(uniqueKeysWithValues: [(key, value)]))
    }

    /// Whether a data field's value is sent when the target lists no fields: nested objects and
    /// arrays are not.
    static func isSentUnlisted(_ value: JSONValue) -> Bool {
        switch value {
        case .object, .array: return false
        default: return true
        }
    }

    /// Fields the org sets itself.
    static let systemFields = ["Id", "CreatedDate", "CreatedById", "LastModifiedById", "LastModifiedDate", "SystemModstamp", "IsDeleted"]
}
