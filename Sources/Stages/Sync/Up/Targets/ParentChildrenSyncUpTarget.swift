import JSON
import Soups

/// Mobile Sync's parent-children sync-up target: a parent soup and a child soup linked by the
/// children's parent id field; a tree is synced when its parent or any child is dirty.
public struct ParentChildrenSyncUpTarget: SyncUpTarget {
    public var parent: ParentInfo
    public var children: ChildrenInfo
    public var relationship: RelationshipType
    public var parentCreateFieldlist: [String]?
    public var parentUpdateFieldlist: [String]?
    public var childrenCreateFieldlist: [String]?
    public var childrenUpdateFieldlist: [String]?
    public var preferredTransport: SyncUpTransport { .collections }
    public var hasChildren: Bool { true }
    public var references: [SyncUpReference] {
        [SyncUpReference(soup: children.soupName, field: children.parentIdFieldName, referencedSoup: parent.soupName)]
    }
    /// A child holding a parent's `local_` id is a child of that parent's tree.
    public var treesAreIndependent: Bool { true }

    public func idFieldName(inSoup soup: String) -> String {
        soup == parent.soupName ? parent.idFieldName : children.idFieldName
    }

    public func externalIdFieldName(inSoup soup: String) -> String? {
        soup == parent.soupName ? parent.externalIdFieldName : children.externalIdFieldName
    }

    public func modificationDateFieldName(inSoup soup: String) -> String {
        soup == parent.soupName ? parent.modificationDateFieldName : children.modificationDateFieldName
    }

    public init(parent: ParentInfo, children: ChildrenInfo, relationship: RelationshipType,
                parentCreateFieldlist: [String]? = nil, parentUpdateFieldlist: [String]? = nil,
                childrenCreateFieldlist: [String]? = nil, childrenUpdateFieldlist: [String]? = nil) {
        self.parent = parent
        self.children = children
        self.relationship = relationship
        self.parentCreateFieldlist = parentCreateFieldlist
        self.parentUpdateFieldlist = parentUpdateFieldlist
        self.childrenCreateFieldlist = childrenCreateFieldlist
        self.childrenUpdateFieldlist = childrenUpdateFieldlist
    }

    /// Dirty parents, plus the parents of dirty children. A dirty child whose parent is not in the
    /// parent soup is never sent (as in Mobile Sync): it has no tree.
    public func candidateIds(in store: SoupStore) async throws -> [Int64] {
        try await walk(in: store, candidates: true, stranded: false).candidateIds
    }

    /// Dirty children whose parent id names no entry of the parent soup: no tree reaches them.
    public func strandedRecords(in store: SoupStore) async throws -> [SyncUpStrandedRecord] {
        try await walk(in: store, candidates: false, stranded: true).stranded
    }

    /// Both from one walk over the dirty children.
    public func candidateIdsAndStranded(in store: SoupStore) async throws -> (candidateIds: [Int64], stranded: [SyncUpStrandedRecord]) {
        try await walk(in: store, candidates: true, stranded: true)
    }

    /// The candidates (when asked: the dirty parents and the parents of dirty children) and the
    /// stranded children (when asked), from one walk over the dirty children.
    private func walk(in store: SoupStore, candidates: Bool, stranded: Bool) async throws -> (candidateIds: [Int64], stranded: [SyncUpStrandedRecord]) {
        var ids = candidates ? Set(try await store.dirtyEntryIds(in: parent.soupName)) : []
        var reasons: [(id: Int64, reason: String)] = []
        try await forEachDirtyChildPage(in: store) { page, parents in
            if candidates {
                for entries in parents.values { ids.formUnion(entries.compactMap(\.soupEntryId)) }
            }
            guard stranded else { return }
            for entry in page where parents[entry[children.parentIdFieldName] ?? .null]?.isEmpty ?? true {
                guard let id = entry.soupEntryId else { continue }
                let parentId = entry[children.parentIdFieldName]?.stringValue
                let reason = parentId.map { "its parent \(children.parentIdFieldName) = \($0) is not in \(parent.soupName), so no parent-children tree sends it" }
                    ?? "it has no \(children.parentIdFieldName), so no parent-children tree sends it"
                reasons.append((id, reason))
            }
        }
        // Read whole only now: the walk above kept each child's parent id alone.
        var records: [SyncUpStrandedRecord] = []
        for chunk in reasons.chunked(into: 2000) {
            let entries = try await store.retrieve(ids: chunk.map(\.id), from: children.soupName)
            let byId = Dictionary(entries.compactMap { entry in entry.soupEntryId.map { ($0, entry) } }, uniquingKeysWith: { first, _ in first })
            for (id, reason) in chunk {
                if let entry = byId[id] { records.append(SyncUpStrandedRecord(record: childRecord(entry), reason: reason)) }
            }
        }
        return (ids.sorted(), records)
    }

    /// The dirty children, 2,000 at a time — each with its parent id field only — with the parent
    /// entries (their sync columns: which exist) that those ids name.
    private func forEachDirtyChildPage(in store: SoupStore,
                                       _ body: ([JSONObject], [JSONValue: [JSONObject]]) throws -> Void) async throws {
        var afterId: Int64 = 0
        while true {
            let page = try await store.dirtyEntries(in: children.soupName, afterId: afterId, limit: 2000, keeping: [children.parentIdFieldName])
            guard let last = page.last?.soupEntryId else { return }
            afterId = last
            let parentIds = Set(page.compactMap { $0[children.parentIdFieldName]?.stringValue }).map(JSONValue.string)
            try body(page, try await store.entrySyncColumns(in: parent.soupName, where: parent.idFieldName, in: parentIds))
        }
    }

    private func childRecord(_ child: JSONObject) -> SyncUpRecord {
        SyncUpRecord(
            soup: children.soupName, entry: child, objectType: children.sobjectType, idField: children.idFieldName,
            modificationDateField: children.modificationDateFieldName, externalIdField: children.externalIdFieldName,
            createFields: childrenCreateFieldlist, updateFields: childrenUpdateFieldlist)
    }

    public func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
        let parents = try await store.retrieve(ids: ids, from: parent.soupName)
        let parentIds = parents.compactMap { $0[parent.idFieldName]?.stringValue }.map(JSONValue.string)
        let childrenByParent = try await store.entries(in: children.soupName, where: children.parentIdFieldName, in: parentIds)
        return parents.map { entry in
            let parentRecord = SyncUpRecord(
                soup: parent.soupName, entry: entry, objectType: parent.sobjectType, idField: parent.idFieldName,
                modificationDateField: parent.modificationDateFieldName, externalIdField: parent.externalIdFieldName,
                createFields: parentCreateFieldlist, updateFields: parentUpdateFieldlist)
            let key = entry[parent.idFieldName] ?? .null
            let childEntries = (childrenByParent[key] ?? []).sorted { ($0.soupEntryId ?? 0) < ($1.soupEntryId ?? 0) }
            let childRecords = childEntries.map(childRecord)
            return SyncUpTree(parent: parentRecord, children: childRecords, relationship: relationship,
                              parentIdField: children.parentIdFieldName, childRelationshipName: children.sobjectTypePlural)
        }
    }
}

extension ParentChildrenSyncUpTarget {
    /// The target a sync's JSON describes, as Mobile SDK reads it; the parent's field lists fall
    /// back to the options' `fieldlist`.
    public init(sync: SyncDefinition, settings: StageSettings) throws {
        let json = sync.target
        guard let parent = json["parent"]?.objectValue, let children = json["children"]?.objectValue else {
            settings.report(sync.path.isEmpty ? "target" : nil, "a parent-children target needs \"parent\" and \"children\"")
            throw StageSettingsInvalid()
        }
        let fieldlist = sync.options["fieldlist"]?.arrayValue?.compactMap(\.stringValue)
        func list(_ keys: String...) -> [String]? {
            for key in keys { if let values = json[key]?.arrayValue { return values.compactMap(\.stringValue) } }
            return nil
        }
        self.init(parent: ParentInfo(json: parent), children: ChildrenInfo(json: children),
                  relationship: RelationshipType(rawValue: json["relationshipType"]?.stringValue ?? "") ?? .masterDetail,
                  parentCreateFieldlist: list("createFieldlist", "parentCreateFieldlist") ?? fieldlist,
                  parentUpdateFieldlist: list("updateFieldlist", "parentUpdateFieldlist") ?? fieldlist,
                  childrenCreateFieldlist: list("childrenCreateFieldlist"), childrenUpdateFieldlist: list("childrenUpdateFieldlist"))
    }
}
