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
    private func runRounds(_ tally: inout Tally) async throws {
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

    /// The requests that start the parts after the first (at most ``overlapParts`` parts) for a
    /// phase of requests of `writes` writes each, such that the page ends soonest when saving a
    /// write costs the client what making it costs the org: the first part's writes, then for
    /// each next part the longer of its writes and the save of the part before, then the last
    /// part's save, and ``partCost`` for each part after the first. Of two cuts as quick, the one
    /// with fewer parts, then the one with the smaller last part: its save is waited for behind
    /// nothing. The model was made for parts that wait for each other, and is kept (not derived
    /// again) for parts that leave at once. A phase of more than ``cutPositions`` requests (a page
    /// of single-record requests) is cut only at that many evenly spaced requests and before its
    /// last, so the search stays bounded (about 40,000 cuts weighed, allocating only for a better one).
    static func quickestCut(writes: [Int]) -> [Int] {
        var upTo = [0]
        upTo.reserveCapacity(writes.count + 1)
        for count in writes { upTo.append(upTo[upTo.count - 1] + count) }
        let count = writes.count
        guard count > 1 else { return [] }
        let positions = count <= cutPositions ? Array(1..<count)
            : Array(Set((1..<cutPositions).map { $0 * count / cutPositions } + [count - 1])).sorted()
        func part(_ from: Int, _ to: Int) -> Int { upTo[to] - upTo[from] }
        // Cost, parts and last part's writes of the best cut so far; the page whole to begin with.
        var best = (cost: 2 * part(0, count), parts: 1, last: part(0, count))
        var bestCut: [Int] = []
        // A cut before `first`, then before `second` and `third` when given.
        func consider(_ first: Int, _ second: Int? = nil, _ third: Int? = nil) {
            var (cost, before, start, parts) = (part(0, first), part(0, first), first, 1)
            func partEnding(_ end: Int) {
                let writes = part(start, end)
                cost += max(writes, before) + Self.partCost
                (before, start, parts) = (writes, end, parts + 1)
            }
            if let second { partEnding(second) }
            if let third { partEnding(third) }
            partEnding(count)
            let candidate = (cost: cost + before, parts: parts, last: before)
            if candidate < best {
                best = candidate
                bestCut = [first] + [second, third].compactMap { $0 }
            }
        }
        for (i, first) in positions.enumerated() {
            consider(first)
            guard overlapParts > 2 else { continue }
            for (j, second) in positions[(i + 1)...].enumerated() {
                consider(first, second)
                guard overlapParts > 3 else { continue }
                for third in positions[(i + 1 + j + 1)...] { consider(first, second, third) }
            }
        }
        return bestCut
    }

    /// What a part after the first costs besides its writes, in writes: a save of its own, and
    /// where its new dates are read by a request of its own (LEAVE_IF_CHANGED but not through
    /// Collections), that read and the wait for the answer to the part before it. It keeps a page
    /// of a few records whole.
    static let partCost = 50

    /// The most requests ``quickestCut(writes:)`` weighs cutting before.
    static let cutPositions = 64

    /// Why a part of a page did not leave (``runInParts``): the run is being cancelled, or the
    /// writes of the part before it stopped.
    private enum PartHeld: Error {
        case cancelled, stopped
    }

    /// One page's sync with a tally of its own, and how it ended (its committed work is in the
    /// tally even when it stopped with an error).
    struct PageRun: Sendable {
        var tally: Tally
        var outcome: PageOutcome?
        var error: (any Error)?
        var count: Int
    }

    private func runPage(_ page: [Int64], heldBack: [String: Set<Int64>], transport: SyncUpTransport) async -> PageRun {
        var tally = Tally()
        do {
            var trees = try await target.trees(for: page, in: store)
            holdBack(&trees, heldBack, tally: &tally)
            let cuts = overlapCuts(trees, transport: transport)
            guard !cuts.isEmpty else {
                let outcome = try await syncPage(&trees, transport: transport, tally: &tally)
                return PageRun(tally: tally, outcome: outcome, count: page.count)
            }
            logger.debug("sync up \(settings.syncName): a page of \(trees.count) trees sent and saved in \(cuts.count + 1) parts, cut before trees \(cuts)")
            return await runInParts(trees, cutBefore: cuts, transport: transport, tally: tally, count: page.count)
        } catch {
            return PageRun(tally: tally, error: error, count: page.count)
        }
    }

    /// The most parts a page is cut into (``overlapCuts(_:transport:)``). Each part after the
    /// first costs a save of its own (and, where it reads its new dates in a request of its own,
    /// that read and a round trip's wait for the part before it). Four, with a small last part,
    /// ended the 1,000 × 5 journey as soon as three even ones to 8% sooner at 0 ms, and 2–4%
    /// sooner at 50 ms (medians of alternating runs, when every part waited for the one before).
    static let overlapParts = 4

    /// Where to cut a page so that the client saves each part while the org works on the next:
    /// the trees that start the requests splitting the page's first phase into up to
    /// ``overlapParts`` runs of requests (``quickestCut(writes:)``; each part then packs into
    /// exactly the requests it took in the whole page, so a cut costs no write request). About
    /// even, because saving a record costs the client about what creating it costs the org: a
    /// part's save is hidden only behind a next part as large; the last part's is not hidden at
    /// all, so of cuts as quick the one with the smallest last part is taken. None when the page
    /// fills fewer than two requests, in a dry run, or when the
    /// target carries new ids into other trees (a part must not be planned before another saves).
    private func overlapCuts(_ trees: [SyncUpTree], transport: SyncUpTransport) -> [Int] {
        guard !settings.dryRun, transport != .bulk, target.treesAreIndependent, trees.count > 1 else { return [] }
        var planned = trees
        // Packing reads no write's fields: the cut is found without building any payload.
        let planner = SyncUpPlanner(payloads: false)
        let operations = planned.indices.map { planner.plan(&planned[$0], index: $0).operations }
        let readBack = SyncUpDateReads(fields: readsBack(transport) ? Self.dateFields(trees) : [:])
        guard let first = SyncUpPacker(transport: transport, readBack: readBack).phases(operations).first, first.count > 1 else { return [] }
        var cuts: [Int] = []
        for cutRequest in Self.quickestCut(writes: first.map(\.operations.count)) {
            let cut = first[cutRequest].operations.map(\.key.tree).min() ?? 0
            // A tree whose writes span the cut (its children packed after it) keeps the cut off.
            let before = first[..<cutRequest].flatMap { $0.operations.map(\.key.tree) }
            guard cut > (cuts.last ?? 0), before.allSatisfy({ $0 < cut }) else { continue }
            cuts.append(cut)
        }
        return cuts
    }

    /// A page synced in parts side by side (``overlapCuts(_:transport:)``): one LEAVE_IF_CHANGED
    /// check for the whole page, then each part sent, answered and saved on its own.
    private func runInParts(_ trees: [SyncUpTree], cutBefore cuts: [Int], transport: SyncUpTransport, tally: Tally, count: Int) async -> PageRun {
        // The page's count less its trees (those held back), plus each part's that ran.
        var run = PageRun(tally: tally, count: count - trees.count)
        var outcome = PageOutcome()
        let conflicts: [Int64: SyncUpError]
        do {
            conflicts = SyncUpConflictChecker.byRoot(try await treesLeftAlone(trees), in: trees)
        } catch {
            run.error = error
            return run
        }
        // Parts whose requests read their new dates back (or that need none) leave at once,
        // together keeping at most `maxInFlight` requests in flight: the org answers them in turn
        // and the client saves each while the org works on the next. A part that reads its new
        // dates in a request of its own is planned at once but leaves only once the org has
        // answered the writes of the part before it (and that part's read is on its way, most
        // likely ahead of it): sent at once, its writes would come before the earlier part's
        // read (the org answers one request at a time). Such a part does not leave at all when
        // the writes of the one before it stopped (a spent API budget, a refused login) or the
        // run is being cancelled: as a page, nothing more is sent then. A part whose read of new
        // dates fails is not saved: the journal settles it next run.
        let atOnce = settings.mergeMode != .leaveIfChanged || readsBack(transport)
        let inFlight = atOnce ? SyncUpInFlight(maxInFlight: settings.maxInFlight, parts: cuts.count + 1) : nil
        let bounds = [0] + cuts + [trees.count]
        let signals = atOnce ? [] : cuts.map { _ in AsyncStream<Void>.makeStream() }
        @Sendable func sync(_ part: Int) async -> PageRun {
            var partTrees = Array(trees[bounds[part]..<bounds[part + 1]])
            var tally = Tally()
            let next = part < signals.count ? signals[part].continuation : nil
            let seat = inFlight?.part(part)
            defer {
                next?.finish()
                seat?.passTurn()
            }
            var leave: (@Sendable () async throws -> Void)?
            if part > 0, !signals.isEmpty {
                let before = signals[part - 1].stream
                leave = {
                    var leaves = false
                    for await _ in before { leaves = true }
                    guard !Task.isCancelled else { throw PartHeld.cancelled }
                    guard leaves else { throw PartHeld.stopped }
                }
            }
            var answered: (@Sendable () -> Void)?
            if let next {
                answered = {
                    next.yield()
                    next.finish()
                }
            }
            do {
                let outcome = try await syncPage(&partTrees, transport: transport, tally: &tally, conflictsBefore: conflicts,
                                                 beforeSending: leave, answered: answered, inFlight: seat)
                return PageRun(tally: tally, outcome: outcome, count: partTrees.count)
            } catch PartHeld.cancelled {
                // Cancelled with its trees unsent (a cancelled wait ends without the signal): the
                // page (and the sync) did not finish.
                return PageRun(tally: tally, error: CancellationError(), count: 0)
            } catch PartHeld.stopped {
                return PageRun(tally: tally, count: 0)
            } catch is SyncUpInFlight.Stopped {
                // Stopped by another part (its cause is set before any part can see the stop): the
                // page ends with that cause, whichever part is reported first.
                return PageRun(tally: tally, error: inFlight?.cause ?? CancellationError(), count: 0)
            } catch {
                return PageRun(tally: tally, error: error, count: partTrees.count)
            }
        }
        let parts = await withTaskGroup(of: PageRun.self) { group in
            for part in bounds.indices.dropLast() { group.addTask { await sync(part) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for part in parts {
            run.count += part.count
            run.tally.absorb(part.tally)
            if let error = part.error { run.error = run.error ?? error }
            if let done = part.outcome {
                outcome.settledRoots.formUnion(done.settledRoots)
                outcome.sawUncertain = outcome.sawUncertain || done.sawUncertain
            }
        }
        if run.error == nil { run.outcome = outcome }
        return run
    }

    /// Settles the journal of earlier attempts: adopted creates are counted and listed;
    /// what stays uncertain is held back.
    private func reconcile(_ tally: inout Tally) async throws -> [String: Set<Int64>] {
        let reconciler = SyncUpJournalReconciler(client: client, store: store, syncName: settings.syncName, mergeMode: settings.mergeMode,
                                                 target: target)
        let settled = try await reconciler.reconcile()
        var success: [SyncUpResultFiles.Row] = []
        for row in settled.rows {
            let key = SyncUpJournalReconciler.EntryKey(soup: row.soup, id: row.entryId)
            if row.kind == .success {
                tally.pending[key] = nil
                tally.result.add(row.operation == "update" ? StageCounts.updated : StageCounts.created, object: row.object)
                success.append(row)
            } else {
                tally.pending[key] = row
            }
        }
        try await files.add(success)
        if settled.adopted > 0 {
            logger.info("\(settled.adopted) record(s) created by an earlier attempt whose answer was lost were found in the org and kept")
        }
        if settled.notApplied > 0 {
            logger.info("\(settled.notApplied) write(s) whose answer was lost were not applied by the org and are sent again")
        }
        if settled.heldCount > 0 {
            logger.warning("\(settled.heldCount) record(s) whose answer was lost could not be settled yet and are not sent in this run")
        }
        return settled.heldBack
    }

    /// Trees holding an uncertain record wait for it: none of their records is sent.
    func holdBack(_ trees: inout [SyncUpTree], _ heldBack: [String: Set<Int64>], tally: inout Tally) {
        guard !heldBack.isEmpty else { return }
        trees.removeAll { tree in
            guard tree.records.contains(where: { heldBack[$0.soup]?.contains($0.entryId) ?? false }) else { return false }
            for record in tree.records where record.isDirty && !(heldBack[record.soup]?.contains(record.entryId) ?? false) {
                let key = SyncUpJournalReconciler.EntryKey(soup: record.soup, id: record.entryId)
                tally.pending[key] = SyncUpResultFiles.Row(
                    kind: .error, object: record.objectType ?? "unknown", operation: record.action == .delete ? "delete" : record.action == .update ? "update" : "create",
                    entryId: record.entryId, localId: record.id.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: record.hasServerId ? record.id : nil,
                    errorCode: "UNRESOLVED_REFERENCE", errorMessage: "not sent: a record of its tree is uncertain; sent once that is settled",
                    fields: JSONObject(), soup: record.soup)
            }
            return true
        }
    }

    /// Dirty records no tree reaches are failures of the run, not silence.
    private func reportStranded(_ stranded: [SyncUpStrandedRecord], tally: inout Tally) async throws {
        guard !stranded.isEmpty else { return }
        var changes = SoupChangeSet()
        var rows: [SyncUpResultFiles.Row] = []
        for item in stranded {
            var entry = item.record.entry
            let error = SyncUpError(status: 0, code: "UNRESOLVED_REFERENCE", message: item.reason)
            entry[SyncField.lastError] = .string(JSONValue.object(error.json).jsonString)
            changes.save(entry, in: item.record.soup)
            let object = item.record.objectType ?? "unknown"
            tally.result.add(settings.dryRun ? StageCounts.rejected : StageCounts.failed, object: object)
            rows.append(SyncUpResultFiles.Row(
                kind: settings.dryRun ? .plan : .error, object: object, operation: settings.dryRun ? "reject" : "create", entryId: item.record.entryId,
                localId: item.record.id.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: item.record.hasServerId ? item.record.id : nil,
                errorCode: error.code, errorMessage: error.message, fields: JSONObject()))
        }
        if !settings.dryRun { try await store.apply(changes) }
        try await files.add(rows)
        logger.warning("\(stranded.count) dirty record(s) are reached by no tree of this sync and are not sent (see the error CSV)")
    }

    /// What a page's sync decided beyond the soups.
    struct PageOutcome {
        /// Candidates (by root entry id) whose every record has a definite outcome.
        var settledRoots = Set<Int64>()
        var sawUncertain = false
    }

    /// A write a Bulk job spanning pages already carried (``runBulkJobs``): its journal entry, and
    /// its outcome once the record's operation is planned again.
    struct SentWrite {
        var journalId: Int64
        var outcome: (SyncUpOperation) -> SyncUpOutcome
    }

    /// - Parameters:
    ///   - sentBefore: writes already sent (by entry): their outcomes stand for the first pass's.
    ///   - conflictsBefore: LEAVE_IF_CHANGED conflicts found before they were sent (by root entry
    ///     id), instead of a check now.
    ///   - beforeSending: awaited once the page is planned, before its first write is journaled
    ///     and sent (whether or not it has any; not in a dry run, which sends nothing); what it
    ///     throws ends the page with nothing written.
    ///   - answered: called once the org has answered the page's writes (and, under
    ///     LEAVE_IF_CHANGED, any read of new dates not read back by them is on its way), before
    ///     the page is saved.
    ///   - inFlight: shared with the parts of a page sent side by side.
    func syncPage(_ trees: inout [SyncUpTree], transport: SyncUpTransport, tally: inout Tally,
                  sentBefore: [SyncUpJournalReconciler.EntryKey: SentWrite] = [:], conflictsBefore: [Int64: SyncUpError]? = nil,
                  beforeSending: (@Sendable () async throws -> Void)? = nil,
                  answered: (@Sendable () -> Void)? = nil, inFlight: SyncUpInFlight.Part? = nil) async throws -> PageOutcome {
        var final: [RecordKey: SyncUpOutcome] = [:]
        var kinds: [RecordKey: SyncUpOperation.Kind] = [:]
        var sent: [RecordKey: JSONObject] = [:]
        var removed = Set<RecordKey>()
        var results = SyncUpSender.Results()
        // The records as read: their ids before the org gave any, and the entries the save replaces.
        var asRead: [RecordKey: SyncUpRecord] = [:]
        for (index, tree) in trees.enumerated() {
            for (child, record) in tree.positionedRecords {
                let key = RecordKey(tree: index, child: child)
                asRead[key] = record
                // An earlier run gave up on it after a lost answer: the org may have applied it.
                if record.lastErrorCode == SyncUpError.answerLost { results.mayHaveBeenApplied.insert(key) }
            }
        }
        let conflicts: [Int: SyncUpError]
        if let conflictsBefore {
            conflicts = Dictionary(uniqueKeysWithValues: trees.indices.compactMap { index in
                conflictsBefore[trees[index].parent.entryId].map { (index, $0) }
            })
        } else {
            conflicts = try await treesLeftAlone(trees)
        }
        for (index, error) in conflicts {
            for (child, record) in trees[index].positionedRecords where record.isDirty {
                let key = RecordKey(tree: index, child: child)
                final[key] = .failed(error)
                trees[index][key.child].entry[SyncField.lastError] = .string(JSONValue.object(error.json).jsonString)
            }
        }
        let applier = SyncUpResultApplier(mergeMode: settings.mergeMode)
        let planner = SyncUpPlanner()
        var pending = Set(trees.indices).subtracting(conflicts.keys)
        // Trees written again after their first request (children after their parent's id, a
        // later pass): a date read back by an earlier request may be stale, so theirs are read after.
        var writtenAgain = Set<Int>()
        let readBack = SyncUpDateReads(fields: readsBack(transport) ? Self.dateFields(trees) : [:])
        /// The dates read back by the requests that wrote them, but for trees written again since.
        func freshReadBack() -> [RecordKey: JSONObject] {
            writtenAgain.isEmpty ? results.readBack : results.readBack.filter { !writtenAgain.contains($0.key.tree) }
        }
        // A record deleted on the server is re-created in a later pass; a re-created parent can
        // reveal a child deleted on the server too, hence up to two extra passes for those. A
        // record refused for a passing reason goes again in up to `recordRetries` more.
        let passes = 1 + max(2, settings.recordRetries)
        for pass in 0..<passes {
            var operations: [[SyncUpOperation]] = []
            var outcomes: [RecordKey: SyncUpOutcome] = [:]
            let plans = pending.sorted().map { index in planner.plan(&trees[index], index: index) }
            // A dry run reads the parent keys of the whole page at once.
            if pass == 0, let validator { await validator.readParentKeys(plans.flatMap(\.operations)) }
            for plan in plans {
                var treeOperations: [SyncUpOperation] = []
                for operation in plan.operations {
                    kinds[operation.key] = operation.kind
                    sent[operation.key] = operation.fields
                    if pass == 0, let write = sentBefore[SyncUpJournalReconciler.EntryKey(soup: operation.soup, id: operation.entryId)] {
                        let outcome = write.outcome(operation)
                        outcomes[operation.key] = outcome
                        results.journalIds[operation.key, default: []].append(write.journalId)
                        if let error = outcome.error, error.code != SyncUpError.answerLost { results.refusedJournalIds.append(write.journalId) }
                    } else if let problem = await validator?.problem(operation) {
                        outcomes[operation.key] = .failed(problem)
                    } else {
                        treeOperations.append(operation)
                    }
                }
                for (key, outcome) in plan.settled {
                    outcomes[key] = outcome
                    if case .discarded = outcome { kinds[key] = nil }
                }
                operations.append(treeOperations)
            }
            if settings.dryRun {
                for operation in operations.joined() where outcomes[operation.key] == nil { outcomes[operation.key] = .planned }
                final.merge(outcomes) { $1 }
                break
            }
            let sender = SyncUpSender(client: client, store: store, syncName: settings.syncName, maxInFlight: settings.maxInFlight,
                                      writer: target as? any SyncUpRecordWriter, checkBudget: budgetCheck,
                                      readBack: readBack, inFlight: inFlight, breaker: breaker)
            results.outcomes = outcomes
            let phases = SyncUpPacker(transport: transport, readBack: readBack).phases(operations)
            if pass > 0 { writtenAgain.formUnion(pending) }
            for phase in phases.dropFirst() { writtenAgain.formUnion(phase.lazy.flatMap(\.operations).map(\.key.tree)) }
            if pass == 0, let beforeSending { try await beforeSending() }
            do {
                try await sender.send(phases, into: &results)
            } catch {
                // Save what the org confirmed before stopping, with the dates known without a request.
                _ = applier.apply(results.outcomes, kinds: kinds, to: &trees, removed: &removed, final: &final, allowRerun: false)
                if settings.mergeMode == .leaveIfChanged && !settings.dryRun {
                    applyKnownDates(&trees, final: final, kinds: kinds, readBack: freshReadBack())
                }
                _ = try await commitEvenIfStopping(trees, final: final, kinds: kinds, sent: sent, removed: removed, results: results,
                                             asRead: asRead, tally: &tally)
                throw error
            }
            var passResult = applier.apply(results.outcomes, kinds: kinds, to: &trees, removed: &removed, final: &final, allowRerun: pass < 2)
            // Row locks and busy answers applied nothing: those trees go again after a pause, up to
            // `recordRetries` times; children only waiting for a parent's id go again as passes allow.
            passResult.rerun.formUnion(final.compactMap { key, outcome in
                guard let error = outcome.error, error.isTransient else { return nil }
                return (error.code == SyncUpError.siblingParentFailed ? pass < 2 : pass < settings.recordRetries) ? key.tree : nil
            })
            // A tree with an uncertain record is never sent again in this page: the journal settles it.
            let uncertainTrees = Set(final.compactMap { key, outcome in outcome.isSettled ? nil : key.tree })
            passResult.rerun.subtract(uncertainTrees)
            guard pass < passes - 1, !passResult.rerun.isEmpty else { break }
            // A busy org is given a moment; children only waiting for their parent's id go at once.
            let busy = Set(final.compactMap { key, outcome in
                outcome.error.map { $0.isTransient && $0.code != SyncUpError.siblingParentFailed } == true ? key.tree : nil
            })
            if !busy.isDisjoint(with: passResult.rerun) { try await Task.sleep(for: Self.retryPause(afterPass: pass)) }
            do {
                try await recreateMissingParents(&trees, among: passResult.parentsToCheck, applier: applier, inFlight: inFlight)
            } catch where SyncUpBreaker.isNoAnswer(error) != nil {
                // Whether those parents are gone is unknown: the children go again under them, and
                // a refusal for a missing parent re-creates it then.
            }
            pending = passResult.rerun
        }
        if settings.mergeMode == .leaveIfChanged && !settings.dryRun {
            do {
                try await refreshModificationDates(&trees, final: final, kinds: kinds, readBack: freshReadBack(), answered: answered, inFlight: inFlight)
            } catch {
                guard let noAnswer = SyncUpBreaker.isNoAnswer(error) else { throw error }
                // Trees with a write the org applied wait, unsaved, for the journal; the rest is saved.
                let held = Set(final.compactMap { $0.value.isSuccess ? $0.key.tree : nil })
                var outcome = try await commitEvenIfStopping(trees, final: final.filter { !held.contains($0.key.tree) }, kinds: kinds, sent: sent,
                                                             removed: removed, results: results, asRead: asRead, tally: &tally)
                holdUnsaved(final.keys.filter { held.contains($0.tree) }, asRead: asRead, kinds: kinds, sent: sent, because: noAnswer, tally: &tally)
                outcome.settledRoots.subtract(held.map { trees[$0].parent.entryId })
                outcome.sawUncertain = true
                if let tripped = breaker.tripped { throw tripped }
                return outcome
            }
        } else {
            answered?()
        }
        return try await commitEvenIfStopping(trees, final: final, kinds: kinds, sent: sent, removed: removed, results: results,
                                        asRead: asRead, tally: &tally)
    }

    /// ``commit`` in a task of its own: once the org has answered, what it confirmed is saved
    /// even when the run is being stopped (a SIGTERM cancels the stage's task, and with it any
    /// store write it starts), so the stage reports it and the next run has nothing to adopt.
    private func commitEvenIfStopping(_ trees: [SyncUpTree], final: [RecordKey: SyncUpOutcome], kinds: [RecordKey: SyncUpOperation.Kind],
                                sent: [RecordKey: JSONObject], removed: Set<RecordKey>, results: SyncUpSender.Results,
                                asRead: [RecordKey: SyncUpRecord], tally: inout Tally) async throws -> PageOutcome {
        let before = tally
        let (outcome, after) = try await Task { [self] in
            var saved = before
            let outcome = try await commit(trees, final: final, kinds: kinds, sent: sent, removed: removed, results: results,
                                           asRead: asRead, tally: &saved)
            return (outcome, saved)
        }.value
        tally = after
        return outcome
    }

    /// Records the org created take their server id everywhere their `local_` id was written —
    /// in the target's reference fields of any soup, beyond the page's own trees (a child in
    /// another page, a record of another object) — in the page's transaction.
    private func propagateNewIds(_ trees: [SyncUpTree], final: [RecordKey: SyncUpOutcome], asRead: [RecordKey: SyncUpRecord],
                                 into changes: inout SoupChangeSet) async throws {
        guard !target.references.isEmpty else { return }
        var created: [String: [String: String]] = [:]
        for (key, outcome) in final where outcome.isSuccess {
            let record = trees[key.tree][key.child]
            guard let original = asRead[key]?.id, SyncField.isLocalId(original), record.hasServerId, let id = record.id else { continue }
            created[record.soup, default: [:]][original] = id
        }
        for reference in target.references {
            guard let mapping = created[reference.referencedSoup], !mapping.isEmpty else { continue }
            // Where each entry already saved by the page sits (a lookup, not a scan per holder).
            var positions: [Int64: Int] = [:]
            for (position, entry) in (changes.saves[reference.soup] ?? []).enumerated() {
                if let entryId = entry.soupEntryId { positions[entryId] = position }
            }
            for chunk in Array(mapping.keys).sorted().chunked(into: 500) {
                // The entries the page saves are taken from it, not read again.
                let holders = try await store.entries(in: reference.soup, where: reference.field, in: chunk.map(JSONValue.string),
                                                      exceptWhole: Set(positions.keys))
                for (value, entries) in holders {
                    guard let local = value.stringValue, let id = mapping[local] else { continue }
                    for stored in entries {
                        guard let entryId = stored.soupEntryId else { continue }
                        let index = positions[entryId]
                        var entry = index.map { changes.saves[reference.soup]![$0] } ?? stored
                        guard entry[reference.field]?.stringValue == local else { continue }
                        entry[reference.field] = .string(id)
                        if let index {
                            changes.saves[reference.soup]![index] = entry
                        } else {
                            changes.save(entry, in: reference.soup)
                            positions[entryId] = changes.saves[reference.soup]!.count - 1
                        }
                        if !entry.isDirty { changes.confirm(entryId, in: reference.soup) }
                    }
                }
            }
        }
    }

    /// OVERWRITE met a child deleted on the server: when its saved parent is gone too, the parent
    /// is re-created with it (one query for the page).
    private func recreateMissingParents(_ trees: inout [SyncUpTree], among indices: Set<Int>, applier: SyncUpResultApplier,
                                        inFlight: SyncUpInFlight.Part?) async throws {
        let candidates = indices.filter {
            !trees[$0].parentRemoved && !trees[$0].parent.isLocallyDeleted && trees[$0].parent.hasServerId && trees[$0].parent.objectType != nil
        }
        for (type, group) in Dictionary(grouping: candidates, by: { trees[$0].parent.objectType ?? "" }) {
            let ids = group.compactMap { trees[$0].parent.id }
            let existing = try await SyncUpInFlight.limited(inFlight) { [client] in try await client.existingRecords(type, ids: ids, fields: ["Id"]) }
            for index in group where existing[SalesforceId.key(trees[index].parent.entry[trees[index].parent.idField])] == nil {
                applier.recreateParent(&trees[index])
            }
        }
    }

    /// Stops the sync up before the org's daily API budget falls under `minApiRemainingPercent`.
    var budgetCheck: @Sendable () async throws -> Void {
        let minimum = settings.minApiRemainingPercent
        let client = client
        return {
            guard let minimum, let usage = await client.usage().dailyUsage, usage.max > 0 else { return }
            let remaining = Double(usage.max - usage.used) * 100 / Double(usage.max)
            if remaining < minimum {
                throw StageFailure(.failed, String(format: "stopped: %.1f%% of the org's daily API requests remain (%d of %d), under minApiRemainingPercent %g",
                                                   remaining, usage.max - usage.used, usage.max, minimum))
            }
        }
    }

    /// Whether new modification dates are read back by the requests that write them (under
    /// LEAVE_IF_CHANGED, through Composite requests of Collections): no request of their own, and
    /// no read waiting behind other writes.
    private func readsBack(_ transport: SyncUpTransport) -> Bool {
        settings.mergeMode == .leaveIfChanged && !settings.dryRun && transport == .collections
    }

    /// Each object's modification date field among the trees' records.
    private static func dateFields(_ trees: [SyncUpTree]) -> [String: String] {
        var fields: [String: String] = [:]
        for tree in trees {
            for record in tree.records {
                if let type = record.objectType, fields[type] == nil { fields[type] = record.modificationDateField }
            }
        }
        return fields
    }

    /// After a LEAVE_IF_CHANGED sync up, the org's new modification dates of the records it
    /// accepted, so the next sync up does not take our own write for a server change: as read
    /// back by the requests that wrote them, else read now. A record it created takes no date
    /// but the ``SyncField/asCreated`` mark, where ``SyncUpDateReads`` allows. `answered` is
    /// called once the read is on its way (or not needed).
    private func refreshModificationDates(_ trees: inout [SyncUpTree], final: [RecordKey: SyncUpOutcome],
                                          kinds: [RecordKey: SyncUpOperation.Kind], readBack: [RecordKey: JSONObject],
                                          answered: (@Sendable () -> Void)?, inFlight: SyncUpInFlight.Part?) async throws {
        let wanted = applyKnownDates(&trees, final: final, kinds: kinds, readBack: readBack)
        guard !wanted.isEmpty else {
            answered?()
            return
        }
        // Every object's dates at once: one round trip, not one an object.
        let ids = wanted.mapValues { [trees] group in (group.keys.compactMap { trees[$0.tree][$0.child].id }, [group.field]) }
        async let reading = SyncUpInFlight.limited(inFlight) { [client, breaker] in try await breaker.read { try await client.existingRecords(ids) } }
        answered?()
        let fetched = try await reading
        for (type, group) in wanted {
            let current = fetched[type] ?? [:]
            for key in group.keys {
                let record = trees[key.tree][key.child]
                if let date = current[SalesforceId.key(record.entry[record.idField])]?[group.field] {
                    trees[key.tree][key.child].entry[group.field] = date
                    trees[key.tree][key.child].entry[SyncField.asCreated] = nil
                }
            }
        }
    }

    /// The part of ``refreshModificationDates`` that needs no request: the dates read back, and the
    /// ``SyncField/asCreated`` mark of records created with nothing written after them that the
    /// org might change them for (their children; a target's own writer, which may not create at
    /// all). Returns the records whose dates are still to read, by object. Also what a page that
    /// stops keeps, so that nothing it created is saved with neither a date nor the mark.
    @discardableResult
    private func applyKnownDates(_ trees: inout [SyncUpTree], final: [RecordKey: SyncUpOutcome], kinds: [RecordKey: SyncUpOperation.Kind],
                                 readBack: [RecordKey: JSONObject]) -> [String: (field: String, keys: [RecordKey])] {
        let withChildWrites = Set(kinds.keys.lazy.filter { $0.child != nil }.map(\.tree))
        let ownWriter = target is any SyncUpRecordWriter
        var wanted: [String: (field: String, keys: [RecordKey])] = [:]
        for (key, outcome) in final where outcome.isSuccess {
            let record = trees[key.tree][key.child]
            guard record.hasServerId, let type = record.objectType, !record.isDirty else { continue }
            if let date = readBack[key]?[record.modificationDateField], date != .null {
                trees[key.tree][key.child].entry[record.modificationDateField] = date
                trees[key.tree][key.child].entry[SyncField.asCreated] = nil
                continue
            }
            if kinds[key] == .create, !ownWriter, key.child != nil || !withChildWrites.contains(key.tree),
               SyncUpDateReads.markedAsCreated(field: record.modificationDateField) {
                trees[key.tree][key.child].entry.markAsCreated(dateField: record.modificationDateField)
                continue
            }
            wanted[type, default: (record.modificationDateField, [])].keys.append(key)
        }
        return wanted
    }

    /// Saves the page: entries changed, entries removed, what the org confirmed, settled journal
    /// entries (only attempts whose answer was lost stay; an attempt the org refused goes even
    /// when a later attempt's answer was lost); then counts and result rows.
    private func commit(_ trees: [SyncUpTree], final: [RecordKey: SyncUpOutcome], kinds: [RecordKey: SyncUpOperation.Kind],
                        sent: [RecordKey: JSONObject], removed: Set<RecordKey>, results: SyncUpSender.Results,
                        asRead: [RecordKey: SyncUpRecord], tally: inout Tally) async throws -> PageOutcome {
        var changes = SoupChangeSet()
        var page = PageOutcome()
        let touched = Set(final.keys.map(\.tree))
        for index in touched.sorted() {
            for (child, record) in trees[index].positionedRecords {
                let key = RecordKey(tree: index, child: child)
                if removed.contains(key) {
                    changes.delete(record.entryId, from: record.soup)
                } else {
                    let read = asRead[key].flatMap { $0.soup == record.soup && $0.entryId == record.entryId ? $0.entry : nil }
                    changes.save(record.entry, in: record.soup, confirmed: !record.isDirty, replacing: read)
                }
            }
        }
        for (key, ids) in results.journalIds where final[key]?.isSettled == true {
            changes.settledJournalIds.append(contentsOf: ids)
        }
        changes.settledJournalIds.append(contentsOf: Set(results.refusedJournalIds).subtracting(changes.settledJournalIds))
        // The store writes the page while its counts and result rows are worked out; they are
        // recorded once the write has committed.
        var writing: PendingWrite<AppliedChanges>?
        if !settings.dryRun {
            try await propagateNewIds(trees, final: final, asRead: asRead, into: &changes)
            writing = store.startApply(try await store.prepare(changes))
        }
        var unsettled = Set<Int>()
        var rows: [SyncUpResultFiles.Row] = []
        var counted: [(key: SyncUpJournalReconciler.EntryKey, count: String, object: String)] = []
        var uncertain: [(key: SyncUpJournalReconciler.EntryKey, row: SyncUpResultFiles.Row)] = []
        for (key, outcome) in final.sorted(by: { ($0.key.tree, $0.key.child ?? -1) < ($1.key.tree, $1.key.child ?? -1) }) {
            let record = trees[key.tree][key.child]
            let object = record.objectType ?? "unknown"
            let kind = kinds[key]
            let operation = kind?.rawValue ?? "delete"
            let countKey: String
            let fileKind: SyncUpResultFiles.Kind
            var action = operation == "upsert" ? "create" : operation
            switch outcome {
            case .matched:
                // A match for a record an earlier attempt may have applied may be that attempt's
                // own create: counted created, so no record is counted twice.
                countKey = results.mayHaveBeenApplied.contains(key) ? StageCounts.created : StageCounts.updated
                fileKind = settings.dryRun ? .plan : .success
            case .succeeded, .discarded, .planned:
                countKey = kind == .create || kind == .upsert ? StageCounts.created : kind == .update ? StageCounts.updated : StageCounts.deleted
                fileKind = settings.dryRun ? .plan : .success
            case .failed(let error):
                countKey = error.code == "CONFLICT" ? StageCounts.conflicts : settings.dryRun ? StageCounts.rejected : StageCounts.failed
                fileKind = settings.dryRun ? .plan : .error
                if settings.dryRun { action = error.code == "CONFLICT" ? "conflict" : "reject" }
            case .uncertain, .unresolved:
                countKey = StageCounts.uncertain
                fileKind = .error
            case .notSent:
                unsettled.insert(key.tree)
                continue
            }
            let error = outcome.error
            let localId = asRead[key]?.id
            let row = SyncUpResultFiles.Row(
                kind: fileKind, object: object, operation: settings.dryRun ? action : operation, entryId: record.entryId,
                localId: localId.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: record.hasServerId ? record.id : nil,
                errorCode: error?.code ?? (outcome.isUncertain ? "UNCERTAIN" : outcome.uncertainMessage != nil ? "UNRESOLVED_REFERENCE" : nil),
                errorMessage: error?.message ?? outcome.uncertainMessage, fields: sent[key] ?? JSONObject(), soup: record.soup)
            let entryKey = SyncUpJournalReconciler.EntryKey(soup: record.soup, id: record.entryId)
            if countKey == StageCounts.uncertain {
                unsettled.insert(key.tree)
                page.sawUncertain = true
                uncertain.append((entryKey, row))
            } else {
                counted.append((entryKey, countKey, object))
                rows.append(row)
            }
        }
        for index in trees.indices where !unsettled.contains(index) { page.settledRoots.insert(trees[index].parent.entryId) }
        _ = try await writing?.value()
        for (key, row) in uncertain { tally.pending[key] = row }
        for (key, count, object) in counted {
            tally.settle(key)
            tally.result.add(count, object: object)
        }
        try await files.add(rows)
        return page
    }
}
