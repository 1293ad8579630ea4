import JSON
import Soups

/// Mobile Sync's single-soup sync-up targets (REST, batch, collection), which differ only in
/// the transport they prefer.
public struct SoupSyncUpTarget: SingleSoupSyncUpTarget {
    public var soupName: String
    public var idFieldName: String
    public var modificationDateFieldName: String
    public var externalIdFieldName: String?
    public var createFieldlist: [String]?
    public var updateFieldlist: [String]?
    public var preferredTransport: SyncUpTransport

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
}

extension SoupSyncUpTarget {
    /// The target a sync's JSON describes, as Mobile SDK reads it (`createFieldlist`,
    /// `updateFieldlist`, else the options' `fieldlist`), sending through `transport` by default.
    public init(sync: SyncDefinition, settings: StageSettings, transport: SyncUpTransport) throws {
        let json = sync.target
        let fieldlist = sync.options["fieldlist"]?.arrayValue?.compactMap(\.stringValue)
        self.init(soupName: sync.soupName, idFieldName: json["idFieldName"]?.stringValue ?? "Id",
                  modificationDateFieldName: json["modificationDateFieldName"]?.stringValue ?? "LastModifiedDate",
                  externalIdFieldName: json["externalIdFieldName"]?.stringValue,
                  createFieldlist: json["createFieldlist"]?.arrayValue?.compactMap(\.stringValue) ?? fieldlist,
                  updateFieldlist: json["updateFieldlist"]?.arrayValue?.compactMap(\.stringValue) ?? fieldlist,
                  preferredTransport: transport)
    }
}
