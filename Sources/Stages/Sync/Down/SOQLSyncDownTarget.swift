import Connectors
import Formats
import JSON
import SOQL
import Soups

/// Mobile Sync's SOQL sync-down target: a query into one soup. As Mobile SDK does, the id and
/// modification-date fields are added to the query when missing, and it is ordered by modification
/// date unless it has its own order.
public struct SOQLSyncDownTarget: SyncDownTarget {
    public var query: SOQLQuery
    public var soupName: String
    public var idFieldName: String
    public var modificationDateFieldName: String
    /// Records per page (`maxBatchSize`, 200–2,000; the org's default when `nil`).
    public var batchSize: Int?
    /// Fetch through a Bulk API 2.0 query job (very large extracts; plain fields only).
    public var bulk: Bool

    /// A target for `query` (SOQL text), checked now.
    public init(query text: String, soupName: String, idFieldName: String = "Id", modificationDateFieldName: String = "LastModifiedDate",
                batchSize: Int? = nil, bulk: Bool = false) throws {
        var query = try SOQL.parseQuery(text)
        let fields = Set(query.select.compactMap { $0.fieldPath?.description.lowercased() })
        for name in [modificationDateFieldName, idFieldName] where !fields.contains(name.lowercased()) {
            query.select.insert(.field(try SOQLFieldPath(name)), at: 0)
        }
        if query.orderBy.isEmpty && !bulk { query.orderBy = [SOQLOrdering(try SOQLFieldPath(modificationDateFieldName))] }
        self.query = query
        self.soupName = soupName
        self.idFieldName = idFieldName
        self.modificationDateFieldName = modificationDateFieldName
        self.batchSize = batchSize
        self.bulk = bulk
        if bulk, query.select.contains(where: { if case .field = $0 { return false }; return true }) {
            throw StageFailure(.invalidInput, "a Bulk API 2.0 query takes plain fields only (no subqueries or aggregates)")
        }
    }

    var isOrderedByModification: Bool {
        query.orderBy.count == 1 && query.orderBy[0].field.description.lowercased() == modificationDateFieldName.lowercased()
            && query.orderBy[0].direction == .ascending
    }

    public func queries(since: Int64?) throws -> [SyncDownQuery] {
        var fetch = query
        if let since { fetch.addFilter(try Self.changedSince(modificationDateFieldName, since)) }
        return [SyncDownQuery(name: "records", query: fetch, orderedByModification: isOrderedByModification, batchSize: batchSize,
                              bulk: bulk)]
    }

    public func save(_ records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageOutcome {
        try await context.store(pageChanges(for: records, in: context))
    }

    public func changes(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        try await pageChanges(for: records, in: context)
    }

    /// Pages come raw when they are merged (``merged(_:in:)``): their records are copied into
    /// entries from their bytes. Not for a query with a subquery: its pages mostly hold child
    /// results, which come built.
    public func takesRawRecords(from query: SyncDownQuery, in context: SyncDownContext) async throws -> Bool {
        guard !query.query.select.contains(where: { if case .subquery = $0 { return true }; return false }) else { return false }
        return try await mergesPages(in: context)
    }

    public func changes(forRaw records: RawJSONObjects, from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        guard try await mergesPages(in: context) else { return try await pageChanges(for: try records.orgRecords(), in: context) }
        return try merged(records, in: context)
    }

    /// Whether a page overwrites whatever its records match, matched as written (``SoupMerge``):
    /// under OVERWRITE, with the id field indexed in a column.
    private func mergesPages(in context: SyncDownContext) async throws -> Bool {
        guard context.mergeMode == .overwrite else { return false }
        return try await context.store.soupSpec(named: soupName).index(forPath: idFieldName).map { $0.type != .json1 } == true
    }

    private func pageChanges(for records: [JSONObject], in context: SyncDownContext) async throws -> SyncDownPageChanges {
        if try await mergesPages(in: context) { return merged(records, in: context) }
        var outcome = SyncDownPageOutcome()
        let ids = records.compactMap { $0[idFieldName] }.filter { !$0.isNull }
        let existing = try await context.store.entriesToSyncOver(in: soupName, where: idFieldName, in: ids, syncId: context.syncId)
        var changes = SoupChangeSet()
        changes.confirmEverySave = [soupName]
        for record in records {
            let object = record["attributes"]?["type"]?.stringValue ?? self.query.from.name
            let current = record[idFieldName].flatMap { existing[$0]?.first }
            if context.mergeMode == .leaveIfChanged, current?.isDirty == true {
                outcome.result.add(StageCounts.conflicts, object: object)
                continue
            }
            SyncedEntry.save(record, over: current, syncId: context.syncId, in: soupName, object: object,
                             changes: &changes, result: &outcome.result)
            outcome.stored(date: ServerTimestamp.milliseconds(record[modificationDateFieldName]))
        }
        return SyncDownPageChanges(changes: changes, outcome: outcome, ids: Set(ids.map { SalesforceId.key($0) }))
    }

    /// A page that overwrites whatever its records match, matched as it is written (``SoupMerge``):
    /// nothing is read first. Every record is stored or found unchanged, so every date counts.
    private func merged(_ records: [JSONObject], in context: SyncDownContext) -> SyncDownPageChanges {
        var outcome = SyncDownPageOutcome()
        var entries: [JSONObject] = []
        entries.reserveCapacity(records.count)
        for record in records {
            entries.append(SyncedEntry.entry(for: record, syncId: context.syncId))
            outcome.stored(date: ServerTimestamp.milliseconds(record[modificationDateFieldName]))
        }
        var changes = SoupChangeSet()
        changes.merge(entries, into: soupName, matching: idFieldName)
        let object = records.first?["attributes"]?["type"]?.stringValue ?? query.from.name
        let ids = Set(records.compactMap { record in record[idFieldName].flatMap { $0.isNull ? nil : SalesforceId.key($0) } })
        return SyncDownPageChanges(changes: changes, outcome: outcome, ids: ids, mergedObjects: [object])
    }

    /// ``merged(_:in:)`` for records left as the org sent them: the store copies them into entries
    /// from their bytes. Only dates and the first record's type are read here: of a query ordered
    /// by modification date, the last record's (the newest when the org orders as asked, and
    /// older otherwise: a resync then fetches more, never less). No ids are listed: a merge reads
    /// nothing before it writes, so a record coming again on a later page (itself merged: a soup's
    /// index, once added, stays) finds what the earlier page wrote.
    private func merged(_ records: RawJSONObjects, in context: SyncDownContext) throws -> SyncDownPageChanges {
        let dateName = JSONParser.MemberNames([modificationDateFieldName])
        var outcome = SyncDownPageOutcome()
        let dated = isOrderedByModification ? records.ranges.indices.suffix(1) : records.ranges.indices[...]
        for position in dated {
            outcome.stored(date: ServerTimestamp.milliseconds(try records.orgMembers(dateName, at: position)[modificationDateFieldName]))
        }
        var changes = SoupChangeSet()
        changes.merge(SyncedRecords(records, syncId: context.syncId), into: soupName, matching: idFieldName)
        let type = records.count > 0 ? try records.orgMembers(JSONParser.MemberNames(["attributes"]), at: 0)["attributes"]?["type"]?.stringValue : nil
        return SyncDownPageChanges(changes: changes, outcome: outcome, ids: [], mergedObjects: [type ?? query.from.name])
    }

    public func cleanGhosts(in context: SyncDownContext) async throws -> StageResult {
        var idsQuery = query
        idsQuery.select = [.field(try SOQLFieldPath(idFieldName))]
        // The order matters only when a LIMIT or OFFSET picks which records the query holds.
        if idsQuery.limit == nil && idsQuery.offset == nil { idsQuery.orderBy = [] }
        var remote = Set<String>()
        for try await page in context.client.queryPages(idsQuery) {
            for record in page.records { remote.insert(SalesforceId.key(record[idFieldName])) }
        }
        let remoteIds = remote
        return try await GhostSweep.remove(in: context.store, soup: soupName, syncId: context.syncId, object: query.from.name,
                                           sparing: context.referencedByDirty, idField: idFieldName, isGhostId: { !remoteIds.contains($0) })
    }
}

extension SOQLSyncDownTarget {
    /// The target a sync's JSON describes (`query`, `idFieldName`, `modificationDateFieldName`,
    /// `maxBatchSize`, `bulk`); a query that does not parse throws its ``SOQLError``.
    public init(sync: SyncDefinition, settings: StageSettings) throws {
        let json = sync.target
        try self.init(query: json["query"]?.stringValue ?? "", soupName: sync.soupName,
                      idFieldName: json["idFieldName"]?.stringValue ?? "Id",
                      modificationDateFieldName: json["modificationDateFieldName"]?.stringValue ?? "LastModifiedDate",
                      batchSize: json["maxBatchSize"]?.integerValue.map(Int.init), bulk: json["bulk"]?.boolValue ?? false)
    }
}
