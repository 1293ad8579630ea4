import Connectors
import Formats
import JSON
import SOQL
import Soups

/// Mobile Sync's parent-children sync-down target: parents with their children in one query (the
/// children's remaining pages followed), each stored in its own soup, children carrying their
/// parent's id. Built through the SOQL AST, so a `parentSoqlFilter` with OR keeps its meaning.
/// Unlike Mobile SDK, an incremental sync also fetches children that changed under unchanged parents.
public struct ParentChildrenSyncDownTarget: SyncDownTarget {
    public var parent: ParentInfo
    public var children: ChildrenInfo
    public var parentFields: [String]
    public var childrenFields: [String]
    public var parentFilter: SOQLCondition?
    public var relationship: RelationshipType
    /// Parents per page (`maxBatchSize`, 200–2,000; the org's default when `nil`).
    public var batchSize: Int?

    public init(parent: ParentInfo, children: ChildrenInfo, parentFieldlist: [String], childrenFieldlist: [String],
                parentSoqlFilter: String?, relationship: RelationshipType, batchSize: Int? = nil) throws {
        self.batchSize = batchSize
        self.parent = parent
        self.children = children
        parentFields = Self.withKeys(parentFieldlist, parent.idFieldName, parent.modificationDateFieldName)
        childrenFields = Self.withKeys(childrenFieldlist, children.idFieldName, children.modificationDateFieldName)
        let filter = parentSoqlFilter?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        parentFilter = filter.isEmpty ? nil : try SOQL.parseCondition(filter)
        self.relationship = relationship
    }

    /// The field list with the id and date fields added when missing (as Mobile SDK does).
    static func withKeys(_ fields: [String], _ id: String, _ date: String) -> [String] {
        var list = fields
        for name in [id, date] where !list.contains(where: { $0.lowercased() == name.lowercased() }) { list.append(name) }
        return list
    }

    /// `SELECT <parent fields>, (SELECT <child fields> FROM <relationship>) FROM <parent> WHERE <filter> ORDER BY <date>`.
    func parentQuery(since: Int64?) throws -> SOQLQuery {
        var children = try SOQLQuery(selecting: childrenFields, from: self.children.sobjectTypePlural)
        children.orderBy = [SOQLOrdering(try SOQLFieldPath(self.children.idFieldName))]
        var query = try SOQLQuery(selecting: parentFields, from: parent.sobjectType)
        query.select.append(.subquery(children))
        if let parentFilter { query.addFilter(parentFilter) }
        if let since { query.addFilter(try Self.changedSince(parent.modificationDateFieldName, since)) }
        query.orderBy = [SOQLOrdering(try SOQLFieldPath(parent.modificationDateFieldName))]
        return query
    }

    /// Children changed since `since` whose parent is in the sync but unchanged since then (a
    /// changed parent comes with all its children in the parents query, so no child is read twice).
    func changedChildrenQuery(since: Int64) throws -> SOQLQuery {
        var parents = try SOQLQuery(selecting: [parent.idFieldName], from: parent.sobjectType)
        if let parentFilter { parents.addFilter(parentFilter) }
        parents.addFilter(try Self.unchangedSince(parent.modificationDateFieldName, since))
        var query = try SOQLQuery(selecting: childrenFields + [children.parentIdFieldName].filter { !childrenFields.contains($0) },
                                  from: children.sobjectType)
        query.addFilter(.comparison(SOQLComparison(try SOQLFieldPath(children.parentIdFieldName), .in, .subquery(parents))))
        query.addFilter(try Self.changedSince(children.modificationDateFieldName, since))
        query.orderBy = [SOQLOrdering(try SOQLFieldPath(children.modificationDateFieldName))]
        return query
    }

    /// On an incremental sync the changed children come first, then the changed parents (ordered,
    /// so `maxTimeStamp` can follow them and a stopped sync resumes without missing a child).
    public func queries(since: Int64?) throws -> [SyncDownQuery] {
        var list: [SyncDownQuery] = []
        if let since {
            list.append(SyncDownQuery(name: "children", query: try changedChildrenQuery(since: since), orderedByModification: false,
                                      batchSize: batchSize))
        }
        list.append(SyncDownQuery(name: "parents", query: try parentQuery(since: since), orderedByModification: true, batchSize: batchSize))
        return list
    }

    public func save(_ records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageOutcome {
        try await context.store(pageChanges(for: records, from: query, in: context))
    }

    public func changes(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        try await pageChanges(for: records, from: query, in: context)
    }

    private func pageChanges(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges {
        query.name == "children" ? try await childrenChanges(records, in: context) : try await treeChanges(records, in: context)
    }

    /// Parents with their nested children.
    private func treeChanges(_ records: [JSONObject], in context: SyncDownContext) async throws -> SyncDownPageChanges {
        var outcome = SyncDownPageOutcome()
        let store = context.store
        let parentIds = records.compactMap { $0[parent.idFieldName] }.filter { !$0.isNull }
        let nested = records.map { ($0[children.sobjectTypePlural]?["records"]?.arrayValue ?? []).compactMap(\.objectValue) }
        let childIds = nested.joined().compactMap { $0[children.idFieldName] }.filter { !$0.isNull }
        let existingParents = try await store.entriesToSyncOver(in: parent.soupName, where: parent.idFieldName, in: parentIds, syncId: context.syncId)
        let localChildren = try await store.entriesToSyncOver(in: children.soupName, where: children.parentIdFieldName, in: parentIds,
                                                              syncId: context.syncId)
        let existingChildren = try await store.entriesToSyncOver(in: children.soupName, where: children.idFieldName, in: childIds, syncId: context.syncId)
        var changes = SoupChangeSet()
        changes.confirmEverySave = [parent.soupName, children.soupName]
        for (record, kids) in zip(records, nested) {
            guard let parentId = record[parent.idFieldName] else { continue }
            let currentParent = existingParents[parentId]?.first
            let currentKids = kids.map { kid in kid[children.idFieldName].flatMap { existingChildren[$0]?.first } }
            if context.mergeMode == .leaveIfChanged {
                // A tree with any dirty record is left alone; its dirty records count as conflicts.
                var seen = Set<Int64>()
                let dirty = ([currentParent] + (localChildren[parentId] ?? []).map(Optional.some) + currentKids).compactMap { $0 }
                    .filter { $0.isDirty && seen.insert($0.soupEntryId ?? -1).inserted }
                if !dirty.isEmpty {
                    for entry in dirty {
                        let isParent = entry.soupEntryId != nil && entry.soupEntryId == currentParent?.soupEntryId
                        outcome.result.add(StageCounts.conflicts, object: isParent ? parent.sobjectType : children.sobjectType)
                    }
                    continue
                }
            }
            var parentRecord = record
            parentRecord[children.sobjectTypePlural] = nil
            SyncedEntry.save(parentRecord, over: currentParent, syncId: context.syncId, in: parent.soupName, object: parent.sobjectType,
                             changes: &changes, result: &outcome.result)
            outcome.stored(date: ServerTimestamp.milliseconds(record[parent.modificationDateFieldName]))
            for (kid, current) in zip(kids, currentKids) {
                var child = kid
                child[children.parentIdFieldName] = parentId
                SyncedEntry.save(child, over: current, syncId: context.syncId, in: children.soupName, object: children.sobjectType,
                                 changes: &changes, result: &outcome.result)
                outcome.stored(nestedDate: ServerTimestamp.milliseconds(kid[children.modificationDateFieldName]))
            }
        }
        return SyncDownPageChanges(changes: changes, outcome: outcome, ids: Set((parentIds + childIds).map { SalesforceId.key($0) }))
    }

    /// Children fetched on their own (changed under unchanged parents).
    private func childrenChanges(_ records: [JSONObject], in context: SyncDownContext) async throws -> SyncDownPageChanges {
        var outcome = SyncDownPageOutcome()
        let store = context.store
        let parentIds = records.compactMap { $0[children.parentIdFieldName] }.filter { !$0.isNull }
        let childIds = records.compactMap { $0[children.idFieldName] }.filter { !$0.isNull }
        let existingChildren = try await store.entriesToSyncOver(in: children.soupName, where: children.idFieldName, in: childIds, syncId: context.syncId)
        let localParents = try await store.entriesToSyncOver(in: parent.soupName, where: parent.idFieldName, in: parentIds, syncId: context.syncId)
        let siblings = try await store.entriesToSyncOver(in: children.soupName, where: children.parentIdFieldName, in: parentIds, syncId: context.syncId)
        var changes = SoupChangeSet()
        changes.confirmEverySave = [children.soupName]
        for record in records {
            let current = record[children.idFieldName].flatMap { existingChildren[$0]?.first }
            if context.mergeMode == .leaveIfChanged, let parentId = record[children.parentIdFieldName] {
                let tree = (localParents[parentId] ?? []) + (siblings[parentId] ?? []) + [current].compactMap { $0 }
                if tree.contains(where: \.isDirty) {
                    outcome.result.add(StageCounts.conflicts, object: children.sobjectType)
                    continue
                }
            }
            SyncedEntry.save(record, over: current, syncId: context.syncId, in: children.soupName, object: children.sobjectType,
                             changes: &changes, result: &outcome.result)
            outcome.stored(date: ServerTimestamp.milliseconds(record[children.modificationDateFieldName]))
        }
        // The parents too: a later page's child of one reads its siblings.
        return SyncDownPageChanges(changes: changes, outcome: outcome, ids: Set((parentIds + childIds).map { SalesforceId.key($0) }))
    }

    /// Parents, then children: a local entry of the sync is a ghost when the org's answer to the
    /// sync's query (ids only, every page, nested child pages included) no longer holds it. Parents
    /// with a dirty child stay.
    public func cleanGhosts(in context: SyncDownContext) async throws -> StageResult {
        var ids = try SOQLQuery(selecting: [parent.idFieldName], from: parent.sobjectType)
        ids.select.append(.subquery(try SOQLQuery(selecting: [children.idFieldName], from: children.sobjectTypePlural)))
        if let parentFilter { ids.addFilter(parentFilter) }
        var remoteParents = Set<String>()
        var remoteChildren = Set<String>()
        for try await page in context.client.queryPages(ids) {
            for record in page.records {
                remoteParents.insert(SalesforceId.key(record[parent.idFieldName]))
                for child in record[children.sobjectTypePlural]?["records"]?.arrayValue ?? [] {
                    remoteChildren.insert(SalesforceId.key(child[children.idFieldName]))
                }
            }
        }
        let store = context.store
        let parentsKept = remoteParents, childrenKept = remoteChildren
        let childSoup = children.soupName, parentIdField = children.parentIdFieldName, idField = parent.idFieldName
        var result = try await GhostSweep.remove(
            in: store, soup: parent.soupName, syncId: context.syncId, object: parent.sobjectType,
            sparing: context.referencedByDirty, idField: idField,
            keeping: { candidates in
                let kids = try await store.entries(in: childSoup, where: parentIdField, in: candidates.compactMap { $0[idField] })
                return Set(candidates.filter { entry in entry[idField].flatMap { kids[$0] }?.contains(where: \.isDirty) ?? false }
                    .compactMap(\.soupEntryId))
            },
            isGhostId: { !parentsKept.contains($0) })
        let childIdField = children.idFieldName
        let childResult = try await GhostSweep.remove(in: store, soup: childSoup, syncId: context.syncId, object: children.sobjectType,
                                                      sparing: context.referencedByDirty, idField: childIdField,
                                                      isGhostId: { !childrenKept.contains($0) })
        for (object, counts) in childResult.byObject { for (key, value) in counts { result.add(key, value, object: object) } }
        return result
    }
}

extension ParentChildrenSyncDownTarget {
    /// The target a sync's JSON describes, as Mobile SDK reads it.
    public init(sync: SyncDefinition, settings: StageSettings) throws {
        let json = sync.target
        try self.init(parent: ParentInfo(json: json["parent"]?.objectValue ?? JSONObject()),
                      children: ChildrenInfo(json: json["children"]?.objectValue ?? JSONObject()),
                      parentFieldlist: json["parentFieldlist"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                      childrenFieldlist: json["childrenFieldlist"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                      parentSoqlFilter: json["parentSoqlFilter"]?.stringValue,
                      relationship: RelationshipType(rawValue: json["relationshipType"]?.stringValue ?? "") ?? .masterDetail,
                      batchSize: json["maxBatchSize"]?.integerValue.map(Int.init))
    }
}
