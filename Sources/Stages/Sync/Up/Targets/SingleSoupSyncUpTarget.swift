import JSON
import Soups

/// A sync-up target over one soup, as Mobile SDK's `SyncUpTarget` base class is: each record
/// ``idsOfRecordsToSyncUp(in:)`` returns is a tree of one, its object type taken from the entry's
/// `attributes.type`. Only ``soupName`` is required; every other member has Mobile SDK's default.
/// Conform to ``SyncUpRecordWriter`` as well to write the records yourself.
public protocol SingleSoupSyncUpTarget: SyncUpTarget {
    var soupName: String { get }
    /// The field holding the server id. Default `Id`.
    var idFieldName: String { get }
    /// The field LEAVE_IF_CHANGED compares with the org's. Default `LastModifiedDate`.
    var modificationDateFieldName: String { get }
    /// The external id field records are upserted on. Default none.
    var externalIdFieldName: String? { get }
    /// The fields a create sends (`nil`: every data field). Default `nil`.
    var createFieldlist: [String]? { get }
    /// The fields an update sends (`nil`: every data field). Default `nil`.
    var updateFieldlist: [String]? { get }

    /// Mobile SDK's `getIdsOfRecordsToSyncUp`: the `_soupEntryId`s to sync up, ascending.
    /// Default: the entries whose `__local__` is true.
    func idsOfRecordsToSyncUp(in store: SoupStore) async throws -> [Int64]
}

extension SingleSoupSyncUpTarget {
    public var idFieldName: String { "Id" }
    public var modificationDateFieldName: String { "LastModifiedDate" }
    public var externalIdFieldName: String? { nil }
    public var createFieldlist: [String]? { nil }
    public var updateFieldlist: [String]? { nil }
    public var preferredTransport: SyncUpTransport { .collections }
    public var hasChildren: Bool { false }
    public func idFieldName(inSoup soup: String) -> String { idFieldName }
    public func externalIdFieldName(inSoup soup: String) -> String? { externalIdFieldName }
    public func modificationDateFieldName(inSoup soup: String) -> String { modificationDateFieldName }

    public func idsOfRecordsToSyncUp(in store: SoupStore) async throws -> [Int64] {
        try await store.dirtyEntryIds(in: soupName)
    }

    public func candidateIds(in store: SoupStore) async throws -> [Int64] {
        try await idsOfRecordsToSyncUp(in: store)
    }

    public func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
        try await store.retrieve(ids: ids, from: soupName).map { SyncUpTree(parent: record($0)) }
    }

    /// `entry` as this target describes it.
    public func record(_ entry: JSONObject) -> SyncUpRecord {
        let type = entry["attributes"]?["type"]?.stringValue
        return SyncUpRecord(
            soup: soupName, entry: entry, objectType: type?.isEmpty == false ? type : nil, idField: idFieldName,
            modificationDateField: modificationDateFieldName, externalIdField: externalIdFieldName,
            createFields: createFieldlist, updateFields: updateFieldlist)
    }
}
