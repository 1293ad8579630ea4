import Connectors
import JSON
import SOQL
import Soups
import Stages

/// A sync-up target for records the org knows by a composite key it has no external id for
/// (say `LastName` + `Email`): a new local record is created only when the org holds none with the
/// same key values; when it holds one, that record is updated and its id kept. Updates and
/// deletes keep Mobile SDK's defaults (the REST API, one record each).
///
/// In a pipeline: `"target": { "iOSImpl": "CompositeKeySyncUpTarget", "keyFields": ["LastName", "Email"] }`.
public struct CompositeKeySyncUpTarget: SingleSoupSyncUpTarget, SyncUpRecordWriter {
    public var soupName: String
    /// The fields whose values together identify a record in the org.
    public var keyFields: [String]
    public var createFieldlist: [String]?
    public var updateFieldlist: [String]?

    public init(soupName: String, keyFields: [String], createFieldlist: [String]? = nil, updateFieldlist: [String]? = nil) {
        self.soupName = soupName
        self.keyFields = keyFields
        self.createFieldlist = createFieldlist
        self.updateFieldlist = updateFieldlist
    }

    /// Registers the target under its name, reading `keyFields` (required) and Mobile SDK's
    /// `createFieldlist` / `updateFieldlist` from the sync's `target`.
    public static func register(in registry: inout StageRegistry) {
        registry.register(syncUpTarget: ["CompositeKeySyncUpTarget"]) { sync, settings in
            let keys = sync.target["keyFields"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard !keys.isEmpty else {
                settings.report("sync", "sync \"\(sync.name)\": CompositeKeySyncUpTarget needs \"keyFields\", a non-empty array of field names")
                throw StageSettingsInvalid()
            }
            return CompositeKeySyncUpTarget(
                soupName: sync.soupName, keyFields: keys,
                createFieldlist: sync.target["createFieldlist"]?.arrayValue?.compactMap(\.stringValue),
                updateFieldlist: sync.target["updateFieldlist"]?.arrayValue?.compactMap(\.stringValue))
        }
    }

    public func createOnServer(_ objectType: String, fields: JSONObject, org: any OrgClient) async throws -> String {
        let conditions = keyFields.map { field -> String in
            switch fields[field] {
            case nil, .null?: return "\(field) = null"
            case .string(let text)?: return "\(field) = \(SOQL.quote(text))"
            case let value?: return "\(field) = \(value.jsonString)"
            }
        }
        var ids: [String] = []
        for try await record in org.query("SELECT Id FROM \(objectType) WHERE \(conditions.joined(separator: " AND ")) LIMIT 2") {
            if let id = record["Id"]?.stringValue { ids.append(id) }
        }
        switch ids.count {
        case 0:
            return try await org.create(objectType, fields)
        case 1:
            try await org.update(objectType, id: ids[0], fields)
            return ids[0]
        default:
            throw OrgAPIError(status: 300, errorCode: "DUPLICATE_KEY",
                              message: "several \(objectType) records have this \(keyFields.joined(separator: " + ")); none was changed")
        }
    }
}
