import Connectors
import JSON
import SOQL
import Soups

/// Where a sync down reads its records and how it stores them. The built-in targets are
/// ``SOQLSyncDownTarget`` and ``ParentChildrenSyncDownTarget``; conform a type to add another.
public protocol SyncDownTarget: Sendable {
    /// The queries that fetch what changed at or after `since` (epoch milliseconds; everything when
    /// `nil`), run in order.
    func queries(since: Int64?) throws -> [SyncDownQuery]

    /// Stores one page of records fetched by `query` (one of `queries(since:)`).
    func save(_ records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageOutcome

    /// What storing one page would write, without writing it: the sync down then writes it —
    /// with the sync's progress, in one transaction — while it reads and merges the next page.
    /// `nil` (the default) when the target only stores through ``save(_:from:in:)``.
    func changes(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges?

    /// Whether the pages of `query` may come to ``changes(forRaw:from:in:)`` as the org sent them,
    /// their records unbuilt; `false` (the default): they come built.
    func takesRawRecords(from query: SyncDownQuery, in context: SyncDownContext) async throws -> Bool

    /// ``changes(for:from:in:)`` for a page whose records were left as the org sent them (asked
    /// for by ``takesRawRecords(from:in:)``). The default builds them and asks `changes(for:from:in:)`.
    func changes(forRaw records: RawJSONObjects, from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges?

    /// Removes the clean local entries of the sync that the org no longer holds (never a dirty
    /// entry, nor a parent with a dirty child); returns `ghostsRemoved` per object.
    func cleanGhosts(in context: SyncDownContext) async throws -> StageResult
}

/// One query of a sync down.
public struct SyncDownQuery: Sendable {
    /// What the query fetches, in the target's terms (e.g. `parents`, `children`).
    public var name: String
    public var query: SOQLQuery
    /// `true` when the query is ordered by modification date, so the sync's `maxTimeStamp` may
    /// follow each page and a stopped sync resumes where it stopped.
    public var orderedByModification: Bool
    /// Records per page asked of the org (`Sforce-Query-Options: batchSize`), when set.
    public var batchSize: Int?
    /// Run as a Bulk API 2.0 query job (plain fields only; values come back as text).
    public var bulk: Bool

    public init(name: String, query: SOQLQuery, orderedByModification: Bool, batchSize: Int? = nil, bulk: Bool = false) {
        self.name = name
        self.query = query
        self.orderedByModification = orderedByModification && !bulk
        self.batchSize = batchSize
        self.bulk = bulk
    }
}

/// What a sync down target works with.
public struct SyncDownContext: Sendable {
    public var client: any OrgClient
    public var store: SoupStore
    /// The sync's id, written into `__sync_id__`.
    public var syncId: Int64
    public var mergeMode: MergeMode
    /// Records (``SalesforceId/key(_:)``) that a dirty entry of some soup refers to: a ghost sweep
    /// spares them, so a pending change never loses the record it points at.
    public var referencedByDirty: Set<String> = []

    public init(client: any OrgClient, store: SoupStore, syncId: Int64, mergeMode: MergeMode) {
        self.client = client
        self.store = store
        self.syncId = syncId
        self.mergeMode = mergeMode
    }

    /// Writes a page's changes and returns its outcome: ``SyncDownTarget/save(_:from:in:)`` for a
    /// target that implements ``SyncDownTarget/changes(for:from:in:)``.
    public func store(_ page: SyncDownPageChanges) async throws -> SyncDownPageOutcome {
        page.outcome(after: try await store.apply(page.changes))
    }
}

extension RawJSONObjects {
    /// The records of a page the org sent, built; one that is not valid JSON fails as the org's
    /// answer at fault (``OrgClientError/invalidResponse(_:)``), as a page that does not parse does.
    public func orgRecords() throws -> [JSONObject] {
        try Self.fromOrg { () throws(JSONSyntaxError) in try objects() }
    }

    /// ``members(_:at:)`` of a record the org sent, failing as ``orgRecords()`` does.
    public func orgMembers(_ names: JSONParser.MemberNames, at position: Int) throws -> JSONObject {
        try Self.fromOrg { () throws(JSONSyntaxError) in try members(names, at: position) }
    }

    private static func fromOrg<T>(_ body: () throws(JSONSyntaxError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw OrgClientError.invalidResponse("the org answered with a query page whose records are not valid JSON (\(error))")
        }
    }
}

/// What storing one page writes (``SyncDownTarget/changes(for:from:in:)``).
public struct SyncDownPageChanges: Sendable {
    public var changes: SoupChangeSet
    public var outcome: SyncDownPageOutcome
    /// The ids (``SalesforceId/key(_:)``) of the records the page stores: a later page holding
    /// one of them is read only once this one is written. A page that only merges (``SoupMerge``)
    /// reads nothing before it writes and may list none.
    public var ids: Set<String>
    /// The object whose `created`, `updated` and `unchanged` counts each of `changes.merges`
    /// makes, known once written (``outcome(after:)``).
    public var mergedObjects: [String]

    public init(changes: SoupChangeSet, outcome: SyncDownPageOutcome, ids: Set<String>, mergedObjects: [String] = []) {
        self.changes = changes
        self.outcome = outcome
        self.ids = ids
        self.mergedObjects = mergedObjects
    }

    /// The page's outcome once `applied`: with the counts of its merges.
    public func outcome(after applied: AppliedChanges) -> SyncDownPageOutcome {
        var outcome = outcome
        outcome.result.merge(Self.counts(of: applied, objects: mergedObjects))
        return outcome
    }

    /// The counts the merges of a page made, by object.
    static func counts(of applied: AppliedChanges, objects: [String]) -> StageResult {
        var result = StageResult()
        for (counts, object) in zip(applied.merges, objects) {
            for (key, amount) in [(StageCounts.created, counts.created), (StageCounts.updated, counts.updated),
                                  (StageCounts.unchanged, counts.unchanged)] where amount > 0 {
                result.add(key, amount, object: object)
            }
        }
        return result
    }
}

/// What storing one page did.
public struct SyncDownPageOutcome: Sendable {
    /// `created`, `updated`, `unchanged` and `conflicts`, per object — for a page whose changes
    /// hold merges (``SyncDownPageChanges/mergedObjects``), the merges' counts only once written
    /// (``SyncDownPageChanges/outcome(after:)``, as ``SyncDownContext/store(_:)`` returns it).
    public var result = StageResult()
    /// The newest modification date among the records stored (epoch milliseconds).
    public var maxTimeStamp: Int64?
    /// The newest modification date among the stored records the query is ordered by — the parents
    /// of a parent-children page, not their nested children: how far an ordered query has got, so
    /// where a stopped or failed sync may resume from.
    public var orderedMaxTimeStamp: Int64?

    public init() {}

    /// Takes the date of a stored record the query is ordered by into account (for both
    /// ``maxTimeStamp`` and ``orderedMaxTimeStamp``).
    public mutating func stored(date: Int64?) {
        guard let date else { return }
        maxTimeStamp = max(maxTimeStamp ?? date, date)
        orderedMaxTimeStamp = max(orderedMaxTimeStamp ?? date, date)
    }

    /// Takes the date of a stored record nested in another (a child fetched with its parent) into
    /// account for ``maxTimeStamp`` only: the query is not ordered by it, so a later page may still
    /// hold parents older than this child.
    public mutating func stored(nestedDate date: Int64?) {
        guard let date else { return }
        maxTimeStamp = max(maxTimeStamp ?? date, date)
    }
}

extension SyncDownTarget {
    public func changes(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        nil
    }

    public func takesRawRecords(from query: SyncDownQuery, in context: SyncDownContext) async throws -> Bool { false }

    public func changes(forRaw records: RawJSONObjects, from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        try await changes(for: try records.orgRecords(), from: query, in: context)
    }

    /// `field >= since` as a SOQL condition (org timestamps have whole seconds: `>=` misses nothing
    /// changed in the same second as the last sync; what comes again is stored unchanged).
    public static func changedSince(_ field: String, _ since: Int64) throws -> SOQLCondition {
        try .compare(field, .greaterThanOrEqual, .dateTime(instant(since)))
    }

    /// `field < since` as a SOQL condition: unchanged since `since`.
    public static func unchangedSince(_ field: String, _ since: Int64) throws -> SOQLCondition {
        try .compare(field, .lessThan, .dateTime(instant(since)))
    }

    private static func instant(_ since: Int64) throws -> SOQLDateTime {
        guard let instant = SOQLDateTime(epochMilliseconds: since) else {
            throw StageFailure(.failed, "the sync's maxTimeStamp \(since) is not a date")
        }
        return instant
    }
}
