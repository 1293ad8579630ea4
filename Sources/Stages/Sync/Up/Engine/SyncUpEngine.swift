import Connectors
import Foundation
import Formats
import JSON
import Logging
import Soups

/// Runs one sync up: settles the journal of an earlier run, finds the dirty trees, and page by
/// page checks conflicts (LEAVE_IF_CHANGED), plans the writes, packs and sends them (journaled
/// first), applies the answers (re-creating what the server deleted, once, under OVERWRITE) and
/// saves the page's outcome in one transaction. In a dry run it makes the same decisions —
/// conflict check included — and sends no write.
struct SyncUpEngine {
    struct Settings {
        var syncName: String
        var mergeMode: MergeMode
        var strategy: SyncUpStrategy
        var bulkThreshold: Int
        var maxInFlight: Int
        var minApiRemainingPercent: Double?
        var dryRun: Bool
        var stageId: String
        /// At most this many records in one Bulk ingest job (else as many as ~100 MB of CSV holds).
        var bulkJobRecords: Int? = nil
        /// Trees loaded and saved together (else ``pageSize(for:)``'s choice for the transport).
        var pageSize: Int? = nil
        /// Times a record refused for a passing reason (a row lock, a busy org) is sent again.
        var recordRetries = SyncUpStage.defaultRecordRetries
    }

    let target: any SyncUpTarget
    let settings: Settings
    let store: SoupStore
    let client: any OrgClient
    let tracker: SyncStateTracker
    let files: SyncUpResultFiles
    let logger: Logger
    let validator: SyncUpRecordValidator?
    let shouldStop: @Sendable () -> Bool
    /// Shared by every engine of one sync-up stage: trips when the org stops answering.
    var breaker = SyncUpBreaker()

    /// Trees loaded, sent and saved together: large enough to fill the transport's requests
    /// (1,000 trees = 5 + 25 full Collections requests), small enough that a run killed part-way
    /// keeps most of what the org confirmed and leaves little to reconcile.
    func pageSize(for transport: SyncUpTransport) -> Int {
        if let size = settings.pageSize { return size }
        switch transport {
        case .rest: return max(10, settings.maxInFlight * 8)
        case .perTree: return 20
        case .composite: return 200
        case .collections, .graph: return target.hasChildren ? 1000 : 2000
        case .bulk: return 10_000
        }
    }

    /// Per-record counts and result rows. Uncertain and unresolved records are tallied at the
    /// end, by their last state: one found and adopted in a later round counts as created once.
    struct Tally {
        var result = StageResult()
        var pending: [SyncUpJournalReconciler.EntryKey: SyncUpResultFiles.Row] = [:]

        /// Entries a page settled: merged into the run's tally, they leave its pending rows.
        var settled: [SyncUpJournalReconciler.EntryKey] = []

        mutating func settle(_ key: SyncUpJournalReconciler.EntryKey) {
            if !pending.isEmpty { pending[key] = nil }
            settled.append(key)
        }

        /// Adds a page's tally (pages of a Bulk sync up run side by side, each with its own).
        mutating func merge(_ page: Tally) {
            result.merge(page.result)
            if !pending.isEmpty { for key in page.settled { pending[key] = nil } }
            pending.merge(page.pending) { $1 }
        }

        /// Adds one part of a page (``runInParts``) to the page's tally: as ``merge(_:)``, and
        /// the part's settled entries stay listed, to leave the run's pending rows in turn.
        mutating func absorb(_ part: Tally) {
            merge(part)
            settled.append(contentsOf: part.settled)
        }

        /// The counts with every record still pending counted as uncertain, and its rows.
        mutating func close() -> [SyncUpResultFiles.Row] {
            let rows = pending.values.sorted { ($0.object, $0.entryId) < ($1.object, $1.entryId) }
            for row in rows { result.add(StageCounts.uncertain, object: row.object) }
            pending = [:]
            return rows
        }
    }

    /// Runs the sync up into `tally`, which the stage shares between its engines and closes once
    /// they have all run (a record still pending then is counted uncertain).
    func run(into tally: inout Tally) async throws {
        try await runRounds(&tally)
    }

    /// A first round sends every candidate; when answers were lost, up to two more rounds find
    /// them in the org (adopting those it applied) and send what still waits on them.
    func runRounds(_ tally: inout Tally) async throws {
        var settledRoots = Set<Int64>()
        for round in 0..<3 {
            var heldBack: [String: Set<Int64>] = [:]
            if !settings.dryRun {
                heldBack = try await reconcile(&tally)
            }
            let ids: [Int64]
            if round == 0 {
                // What to send and what no tree reaches, found together once the journal is
                // settled (a record it adopts is not stranded).
                let found = try await target.candidateIdsAndStranded(in: store)
                try await reportStranded(found.stranded, tally: &tally)
                ids = found.candidateIds
            } else {
                ids = try await target.candidateIds(in: store).filter { !settledRoots.contains($0) }
            }
            if round == 0 { try await tracker.setTotalSize(ids.count) } else if ids.isEmpty { break }
            let transport = settings.strategy.transport(for: target, records: ids.count, bulkThreshold: settings.bulkThreshold)
            logger.info("sync up \(settings.syncName): \(ids.count) tree(s) or record(s) to send, through \(transport.rawValue)\(round > 0 ? " (after lost answers, round \(round + 1))" : "")")
            var done = 0
            var sawUncertain = false
            var pages = ids.chunked(into: pageSize(for: transport)).makeIterator()
            var stopped = false
            var failure: (any Error)?
            if transport == .bulk && !settings.dryRun {
                // Jobs span pages: pages are written into jobs of up to ~100 MB, then saved as their jobs end.
                let run = try await runBulkJobs(ids, heldBack: heldBack, round: round, tally: &tally)
                settledRoots.formUnion(run.settledRoots)
                if run.stopped {
                    try await tracker.finish(.stopped)
                    return
                }
                if !run.sawUncertain { break }
                continue
            }
            // Pages run one at a time: their requests are already in flight together (a Bulk sync
            // up that sends has taken the path above; a dry run's Bulk pages plan side by side).
            let window = transport == .bulk ? Self.bulkPagesInFlight : 1
            await withTaskGroup(of: PageRun.self) { group in
                func startNext() -> Bool {
                    guard failure == nil, !stopped else { return false }
                    guard let page = pages.next() else { return false }
                    if shouldStop() {
                        stopped = true
                        return false
                    }
                    group.addTask { [heldBack] in await runPage(page, heldBack: heldBack, transport: transport) }
                    return true
                }
                var running = 0
                while running < window, startNext() { running += 1 }
                while let run = await group.next() {
                    running -= 1
                    tally.merge(run.tally)
                    if let error = run.error {
                        failure = failure ?? error
                    } else if let outcome = run.outcome {
                        settledRoots.formUnion(outcome.settledRoots)
                        sawUncertain = sawUncertain || outcome.sawUncertain
                        done += run.count
                        if round == 0 {
                            do { try await tracker.advance(done: done) } catch { failure = failure ?? error }
                        }
                    }
                    if startNext() { running += 1 }
                }
            }
            if let failure { throw failure }
            if stopped {
                try await tracker.finish(.stopped)
                return
            }
            if settings.dryRun || !sawUncertain { break }
        }
    }

    /// Bulk pages planned side by side in a dry run.
    static let bulkPagesInFlight = 2
}
