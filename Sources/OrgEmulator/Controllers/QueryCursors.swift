import Formats
import JSON

/// A query whose later pages are still to be fetched (`nextRecordsUrl`).
struct QueryCursor: Sendable {
    var plan: QueryPlan
    /// Ids of the matching records, in result order, from the `first`.
    var ids: [String]
    /// The position of the first record the cursor still holds: once its last page is served,
    /// it keeps that page only (to serve it again to a client whose answer was lost).
    var first = 0
    var position: Int
    var batchSize: Int
    var totalSize: Int
    var version: String
    /// For a page of children of one parent: the precomputed records, from the `first`.
    var childRecords: [JSONValue]?
    /// The query locator's stable part, once a second page exists (`01g…`; each page's locator
    /// adds `-<position>`).
    var id: String?
    /// When a page of it was last served (emulator clock, ms): cursors expire 15 minutes after.
    var lastUsed: Int64 = 0

    /// The position past the last record.
    var end: Int { first + (childRecords?.count ?? ids.count) }

    /// Forgets the records before `position`.
    mutating func drop(before position: Int) {
        if let children = childRecords { childRecords = Array(children[(position - first)...]) } else { ids = Array(ids[(position - first)...]) }
        first = position
    }
}

/// The open query cursors: one per query whose results span pages, kept 15 minutes from their
/// last use and at most 10,000 of them, as an org keeps them.
struct QueryCursors: Sendable {
    private var open: [String: QueryCursor] = [:]
    private var counter: Int64 = 0

    /// The stable part of a new cursor's locator (`01g…`); expired cursors are forgotten first.
    mutating func newId(now: Int64) -> String {
        counter += 1
        open = open.filter { now - $0.value.lastUsed < 15 * 60 * 1000 }
        if open.count > 10_000 {
            for (key, _) in open.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }).prefix(open.count - 10_000) { open[key] = nil }
        }
        return SalesforceId.make(prefix: "01g", counter: counter)
    }

    /// Keeps `cursor` (its pages served so far) under `id`.
    mutating func keep(_ cursor: QueryCursor, id: String) {
        open[id] = cursor
    }

    /// The cursor of a locator's stable part, if it is open.
    func cursor(_ id: String) -> QueryCursor? {
        open[id]
    }

    /// Forgets every cursor (the org was reset).
    mutating func removeAll() {
        open = [:]
    }
}
