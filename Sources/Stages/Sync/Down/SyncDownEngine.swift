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
            for try await page in context.client.queryPages(query.query, batchSize: query.batchSize) {
                if first {
                    total += page.totalSize
                    try await tracker.setTotalSize(total)
                    first = false
                }
                let outcome = try await target.save(page.records, from: query, in: context)
                for (object, counts) in outcome.result.byObject { for (key, value) in counts { result.add(key, value, object: object) } }
                if let stamp = outcome.maxTimeStamp {
                    newest = max(newest, stamp)
                    if query.orderedByModification { try await tracker.raiseMaxTimeStamp(to: stamp) }
                }
                done += page.records.count
                try await tracker.advance(done: done)
                if Task.isCancelled {
                    try await tracker.finish(.stopped)
                    return result
                }
            }
        }
        try await tracker.raiseMaxTimeStamp(to: newest)
        try await tracker.finish(.done)
        return result
    }
}
