import Connectors
import Foundation
import JSON
import Logging
import Soups

/// Runs a sync down: fetches page by page what the target's queries return — everything, or what
/// changed since the sync's `maxTimeStamp` — and stores each page in one transaction with the
/// sync's state after it (size, progress, `maxTimeStamp` from the records stored, as instants),
/// writing one page while the next is read and merged.
struct SyncDownEngine {
    let target: any SyncDownTarget
    let context: SyncDownContext
    let tracker: SyncStateTracker
    let logger: Logger

    /// - Parameter incremental: fetch from `maxTimeStamp` (resync). A full sync down that finds
    ///   its sync STOPPED resumes from there too.
    func run(incremental: Bool) async throws -> StageResult {
        let previous = try await tracker.start()
        let resume = previous.status == .stopped
        let since = (incremental || resume) && previous.maxTimeStamp > 0 ? previous.maxTimeStamp : nil
        if resume { logger.info("sync \(previous.name) stopped before it finished; resuming from \(ServerTimestamp.soqlLiteral(previous.maxTimeStamp))") }
        var result = StageResult()
        var total = 0
        var done = 0
        var newest = since ?? -1
        // A page's write runs while the next page is read and merged; it carries the sync's state
        // after it (progress, maxTimeStamp), so what the store says is done is what it holds.
        var writes = PageWrites(tracker: tracker)
        do {
            for query in try target.queries(since: since) {
                var first = true
                func changes(of page: QueryPage) async throws -> SyncDownPageChanges? {
                    guard let raw = page.raw else { return try await target.changes(for: page.records, from: query, in: context) }
                    return try await target.changes(forRaw: raw, from: query, in: context)
                }
                func store(_ page: QueryPage) async throws -> Bool {
                    if first {
                        total += max(0, page.totalSize)
                        try await writes.settle()
                        try await tracker.setTotalSize(total)
                        first = false
                    }
                    guard var planned = try await changes(of: page) else {
                        // A target that stores through `save` alone: one page at a time.
                        try await writes.settle()
                        var records = page.records
                        if let raw = page.raw { records = try raw.orgRecords() }
                        let outcome = try await target.save(records, from: query, in: context)
                        let stamp = account(outcome, records: page.count)
                        if query.orderedByModification, let stamp { try await tracker.raiseMaxTimeStamp(to: stamp) }
                        try await tracker.advance(done: done)
                        return !Task.isCancelled
                    }
                    if writes.overlaps(planned.ids) {
                        // A record of the page being written comes again: read it once written.
                        try await writes.settle()
                        planned = try await changes(of: page) ?? planned
                    }
                    let stamp = account(planned.outcome, records: page.count)
                    try await writes.start(planned, done: done, raisingMaxTimeStampTo: query.orderedByModification ? stamp : nil,
                                           in: context.store)
                    return !Task.isCancelled
                }
                /// Counts a stored page; returns the newest date of the records the query is
                /// ordered by (mid-run, maxTimeStamp follows only that field: a nested child newer
                /// than the parents of later pages must not let a resume skip them).
                func account(_ outcome: SyncDownPageOutcome, records: Int) -> Int64? {
                    for (object, counts) in outcome.result.byObject { for (key, value) in counts { result.add(key, value, object: object) } }
                    if let stamp = outcome.maxTimeStamp { newest = max(newest, stamp) }
                    done += records
                    return outcome.orderedMaxTimeStamp
                }
                if query.bulk {
                    for try await page in bulkPages(of: query) where try await !store(page) { break }
                } else {
                    let raw = try await target.takesRawRecords(from: query, in: context)
                    for try await page in context.client.queryPages(query.query, batchSize: query.batchSize, raw: raw) where try await !store(page) { break }
                }
                try await writes.settle()
                if Task.isCancelled {
                    try await tracker.finish(.stopped)
                    result.merge(writes.merged)
                    return result
                }
            }
        } catch {
            // What was written before the failure stays accounted.
            try? await writes.settle()
            throw error
        }
        try await tracker.raiseMaxTimeStamp(to: newest)
        try await tracker.finish(.done)
        result.merge(writes.merged)
        return result
    }

    /// The page write under way, with the sync's state it saves and the ids it stores.
    struct PageWrites {
        let tracker: SyncStateTracker
        private typealias Pending = (write: PendingWrite<AppliedChanges>, ids: Set<String>, state: SyncState, mergedObjects: [String])
        private var pending: Pending?
        /// The counts of the merges written so far (a page's merges count once written).
        private(set) var merged = StageResult()

        init(tracker: SyncStateTracker) {
            self.tracker = tracker
        }

        /// Whether the page being written stores one of `ids`.
        func overlaps(_ ids: Set<String>) -> Bool {
            pending.map { !$0.ids.isDisjoint(with: ids) } ?? false
        }

        /// Prepares a page's write while the one under way runs and queues it behind that one —
        /// it writes nothing unless that one committed, whose state it carries past — then waits
        /// for that one: the writer goes from page to page without waiting for this task. The
        /// page's write saves the sync's state with it: `done` records handled and, when given,
        /// `maxTimeStamp` raised.
        mutating func start(_ page: SyncDownPageChanges, done: Int, raisingMaxTimeStampTo stamp: Int64?, in store: SoupStore) async throws {
            var state: SyncState
            if let pending { state = pending.state } else { state = await tracker.state }
            if state.totalSize > 0 && done < state.totalSize { state.progress = done * 100 / state.totalSize }
            if let stamp, stamp > state.maxTimeStamp { state.maxTimeStamp = stamp }
            var changes = page.changes
            changes.syncState = state
            let prepared = try await store.prepare(changes)
            let previous = pending
            pending = (store.startApply(prepared, after: previous?.write), page.ids, state, page.mergedObjects)
            if let previous { try await settle(previous) }
        }

        /// Waits for the write under way; once committed, its state is the sync's.
        mutating func settle() async throws {
            guard let current = pending else { return }
            pending = nil
            try await settle(current)
        }

        private mutating func settle(_ current: Pending) async throws {
            let applied = try await current.write.value()
            merged.merge(SyncDownPageChanges.counts(of: applied, objects: current.mergedObjects))
            await tracker.committed(current.state)
        }
    }

    /// The pages of a Bulk 2.0 query job: its rows as the text Bulk returns (empty = null),
    /// 2,000 to a page, its size the job's row count; the job's next results page is fetched
    /// while these are stored.
    private func bulkPages(of query: SyncDownQuery) -> ProducedSequence<QueryPage> {
        let client = context.client
        return ProducedSequence { yield in
            let type: JSONValue = ["type": .string(query.query.from.name)]
            let fields = query.query.select.compactMap { $0.fieldPath?.description }
            for try await results in client.bulkQuery(query.query.description) {
                // Each field's cell by position in this page's header, its name matched without
                // case; a field the org did not return fails the sync (stored as null, it would
                // erase the local value).
                let cells = try fields.map { field in
                    guard let cell = results.columns.firstIndex(where: { $0.caseInsensitiveCompare(field) == .orderedSame }) else {
                        throw OrgClientError.invalidResponse("Bulk query results: no column for \(field) (columns: \(results.columns.joined(separator: ", ")))")
                    }
                    return cell
                }
                var records: [JSONObject] = []
                records.reserveCapacity(min(results.rows.count, 2000))
                for row in results.rows {
                    var record: JSONObject = ["attributes": type]
                    record.reserveCapacity(fields.count + 1)
                    for (field, cell) in zip(fields, cells) {
                        record[field] = cell < row.count && !row[cell].isEmpty ? .string(row[cell]) : .null
                    }
                    records.append(record)
                    if records.count == 2000 {
                        try await yield(QueryPage(totalSize: results.totalSize, records: records))
                        records.removeAll(keepingCapacity: true)
                    }
                }
                if !records.isEmpty || results.totalSize == 0 { try await yield(QueryPage(totalSize: results.totalSize, records: records)) }
            }
        }
    }
}
