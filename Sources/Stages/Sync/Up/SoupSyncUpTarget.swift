import JSON
import Soups

/// Mobile Sync's single-soup sync-up targets (REST, batch, collection): each dirty entry is a
/// tree of one record, its object type taken from `attributes.type`.
public struct SoupSyncUpTarget: SyncUpTarget {
    public var soupName: String
    public var idFieldName: String
    public var modificationDateFieldName: String
    public var externalIdFieldName: String?
    public var createFieldlist: [String]?
    public var updateFieldlist: [String]?
    public var preferredTransport: SyncUpTransport
    public var hasChildren: Bool { false }
    public func idFieldName(inSoup soup: String) -> String { idFieldName }
    public func externalIdFieldName(inSoup soup: String) -> String? { externalIdFieldName }

    public init(soupName: String, idFieldName: String = "Id", modificationDateFieldName: String = "LastModifiedDate",
                externalIdFieldName: String? = nil, createFieldlist: [String]? = nil, updateFieldlist: [String]? = nil,
                preferredTransport: SyncUpTransport = .collections) {
        self.soupName = soupName
        self.idFieldName = idFieldName
        self.modificationDateFieldName = modificationDateFieldName
        self.externalIdFieldName = externalIdFieldName
        self.createFieldlist = createFieldlist
        self.updateFieldlist = updateFieldlist
        self.preferredTransport = preferredTransport
    }

    public func candidateIds(in store: SoupStore) async throws -> [Int64] {
        try await store.dirtyEntryIds(in: soupName)
    }

    public func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
        try await store.retrieve(ids: ids, from: soupName).map { entry in
            SyncUpTree(parent: record(entry))
        }
    }

    func record(_ entry: JSONObject) -> SyncUpRecord {
        let type = entry["attributes"]?["type"]?.stringValue
        return SyncUpRecord(
            soup: soupName, entry: entry, objectType: type?.isEmpty == false ? type : nil, idField: idFieldName,
            modificationDateField: modificationDateFieldName, externalIdField: externalIdFieldName,
            createFields: createFieldlist, updateFields: updateFieldlist)
    }
}
