import Connectors
import Foundation
import JSON
import Logging
import Soups

/// Runs a sync down: fetches page by page what the target's queries return — everything, or what
/// changed since the sync's `maxTimeStamp` — stores each page in one transaction, and keeps the
/// sync state current (size, progress, `maxTimeStamp` from the records stored, as instants).
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
        for query in try target.queries(since: since) {
            var first = true
            func store(_ page: QueryPage) async throws -> Bool {
                if first {
                    total += page.totalSize
                    try await tracker.setTotalSize(total)
                    first = false
                }
                let outcome = try await target.save(page.records, from: query, in: context)
                for (object, counts) in outcome.result.byObject { for (key, value) in counts { result.add(key, value, object: object) } }
                if let stamp = outcome.maxTimeStamp { newest = max(newest, stamp) }
                // Mid-run, maxTimeStamp follows only the field the query is ordered by: a nested
                // child newer than the parents of later pages must not let a resume skip them.
                if query.orderedByModification, let stamp = outcome.orderedMaxTimeStamp {
                    try await tracker.raiseMaxTimeStamp(to: stamp)
                }
                done += page.records.count
                try await tracker.advance(done: done)
                return !Task.isCancelled
            }
            if query.bulk {
                for try await page in bulkPages(of: query) where try await !store(page) { break }
            } else {
                for try await page in context.client.queryPages(query.query, batchSize: query.batchSize) where try await !store(page) { break }
            }
            if Task.isCancelled {
                try await tracker.finish(.stopped)
                return result
            }
        }
        try await tracker.raiseMaxTimeStamp(to: newest)
        try await tracker.finish(.done)
        return result
    }

    /// The pages of a Bulk 2.0 query job: its size from a COUNT() query, its rows as the text Bulk
    /// returns (empty = null), 2,000 to a page, one page held at a time.
    private func bulkPages(of query: SyncDownQuery) -> ProducedSequence<QueryPage> {
        let client = context.client
        return ProducedSequence { yield in
            var counting = query.query
            counting.select = [.count]
            counting.orderBy = []
            let total = try await client.count(counting.description)
            let fields = query.query.select.compactMap { $0.fieldPath?.description }
            var page: [JSONObject] = []
            for try await row in client.bulkQuery(query.query.description) {
                var record: JSONObject = ["attributes": ["type": .string(query.query.from.name)]]
                for field in fields { record[field] = row[field].flatMap { $0.isEmpty ? nil : JSONValue.string($0) } ?? .null }
                page.append(record)
                if page.count == 2000 {
                    try await yield(QueryPage(totalSize: total, records: page))
                    page = []
                }
            }
            if !page.isEmpty || total == 0 { try await yield(QueryPage(totalSize: total, records: page)) }
        }
    }
}
