import Connectors
import JSON
import Soups

extension SyncUpEngine {
    /// A page whose writes went into Bulk jobs: what is needed to save it once they end (its trees
    /// are loaded again then, so a job of a million rows never holds its records in memory).
    struct SpooledPage {
        var ids: [Int64]
        /// LEAVE_IF_CHANGED conflicts found before sending, by root entry id.
        var conflicts: [Int64: String]
        var soups: [String] = []
        /// The entries written, in the order of their tickets.
        var entryIds: [Int64] = []
        /// Runs of writes into consecutive rows of one job with consecutive journal entries (a page
        /// makes a few): a page of a million-record sync keeps 8 bytes a write, not a ticket each.
        var runs: [(soup: Int32, first: SyncUpBulkJobs.Ticket, count: Int32)] = []

        mutating func append(soup: Int32, entryId: Int64, ticket: SyncUpBulkJobs.Ticket) {
            entryIds.append(entryId)
            if let last = runs.last, last.soup == soup, last.first.job == ticket.job, last.first.row + last.count == ticket.row,
               last.first.journalId + Int64(last.count) == ticket.journalId {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((soup, ticket, 1))
            }
        }

        /// Each write: its soup (an index into `soups`), entry and ticket.
        var writes: [(soup: Int32, entryId: Int64, ticket: SyncUpBulkJobs.Ticket)] {
            var writes: [(soup: Int32, entryId: Int64, ticket: SyncUpBulkJobs.Ticket)] = []
            writes.reserveCapacity(entryIds.count)
            for run in runs {
                for offset in 0..<run.count {
                    let ticket = SyncUpBulkJobs.Ticket(job: run.first.job, row: run.first.row + offset, journalId: run.first.journalId + Int64(offset))
                    writes.append((run.soup, entryIds[writes.count], ticket))
                }
            }
            return writes
        }
    }

    /// How a round of Bulk jobs ended.
    struct BulkRun {
        var settledRoots = Set<Int64>()
        var sawUncertain = false
        var stopped = false
    }

    /// A Bulk sync up whose ingest jobs span pages: each page is loaded, checked for conflicts,
    /// planned, journaled with its jobs' ids and written into their uploads, then dropped; a job
    /// is closed when full (~100 MB of CSV) and runs at the org while the next pages fill the
    /// next. Once the pages end, each is loaded again and saved from its jobs' results through
    /// the same passes as any page (a record deleted on the server re-created, a locked row sent
    /// again). Pages written into jobs are saved even after a stop or a failure: the jobs already
    /// closed run at the org; a job left open leaves its records uncertain, and the next run
    /// aborts it. Jobs a failure leaves unread are read by the next run, from the journal.
    func runBulkJobs(_ ids: [Int64], heldBack: [String: Set<Int64>], round: Int, tally: inout Tally) async throws -> BulkRun {
        let sender = SyncUpSender(client: client, store: store, syncName: settings.syncName, maxInFlight: settings.maxInFlight,
                                  writer: nil, checkBudget: budgetCheck)
        // More than a page of writes: two jobs (at least), so the client and the org work at once.
        var jobs = SyncUpBulkJobs(client: client, sender: sender, maxRecords: settings.bulkJobRecords ?? .max,
                                  firstJobRecords: ids.count > pageSize(for: .bulk) ? (ids.count + 1) / 2 : .max)
        var pages: [SpooledPage] = []
        var run = BulkRun()
        var failure: (any Error)?
        for page in ids.chunked(into: pageSize(for: .bulk)) {
            if shouldStop() {
                run.stopped = true
                break
            }
            do {
                pages.append(try await spool(page, heldBack: heldBack, into: &jobs))
            } catch {
                failure = error
                break
            }
        }
        // After a stop or a failure, a job still taking rows is not sent: the next run aborts it
        // and sends its rows again.
        if !run.stopped && failure == nil { jobs.closeAll() }
        defer { jobs.cancelAll() }
        if jobs.count > 0 {
            logger.info("sync up \(settings.syncName): \(pages.reduce(0) { $0 + $1.entryIds.count }) write(s) in \(jobs.count) Bulk job(s)")
        }
        var lastPage: [Int32: Int] = [:]
        for (index, page) in pages.enumerated() {
            for run in page.runs { lastPage[run.first.job] = index }
        }
        var done = 0
        for (index, page) in pages.enumerated() {
            do {
                let outcome = try await save(page, heldBack: heldBack, jobs: jobs, tally: &tally)
                run.settledRoots.formUnion(outcome.settledRoots)
                run.sawUncertain = run.sawUncertain || outcome.sawUncertain
                done += page.ids.count
                if round == 0 { try await tracker.advance(done: done) }
            } catch {
                failure = failure ?? error
                break
            }
            for (job, last) in lastPage where last == index { jobs.release(job) }
        }
        if let failure { throw failure }
        return run
    }

    /// Loads, checks and plans a page, and writes it into the jobs.
    private func spool(_ page: [Int64], heldBack: [String: Set<Int64>], into jobs: inout SyncUpBulkJobs) async throws -> SpooledPage {
        var trees = try await target.trees(for: page, in: store)
        var ignored = Tally()
        holdBack(&trees, heldBack, tally: &ignored)
        let conflicts = settings.mergeMode == .leaveIfChanged
            ? try await SyncUpConflictChecker(client: client, target: target).conflicts(in: trees) : [:]
        var operations: [SyncUpOperation] = []
        let planner = SyncUpPlanner()
        for index in trees.indices where conflicts[index] == nil {
            operations += planner.plan(&trees[index], index: index).operations
        }
        var spooled = SpooledPage(ids: page, conflicts: SyncUpConflictChecker.byRoot(conflicts, in: trees))
        var soups: [String: Int32] = [:]
        let tickets = try await jobs.add(operations, checkBudget: budgetCheck)
        spooled.entryIds.reserveCapacity(tickets.count)
        for (operation, ticket) in tickets {
            let soup: Int32
            if let known = soups[operation.soup] {
                soup = known
            } else {
                soup = Int32(spooled.soups.count)
                soups[operation.soup] = soup
                spooled.soups.append(operation.soup)
            }
            spooled.append(soup: soup, entryId: operation.entryId, ticket: ticket)
        }
        return spooled
    }

    /// Loads a page again and saves it from its jobs' results. A job that could not be closed or
    /// read leaves its records uncertain: the next run reads the job (journaled with its id).
    private func save(_ page: SpooledPage, heldBack: [String: Set<Int64>], jobs: SyncUpBulkJobs, tally: inout Tally) async throws -> PageOutcome {
        var results: [Int32: Result<BulkIngestResult, any Error>] = [:]
        for job in Set(page.runs.map(\.first.job)).sorted() {
            do {
                results[job] = .success(try await jobs.result(of: job))
            } catch {
                results[job] = .failure(error)
            }
        }
        if let outcome = try await saveCreates(page, results: results, heldBack: heldBack, tally: &tally) { return outcome }
        var sentBefore: [SyncUpJournalReconciler.EntryKey: SentWrite] = [:]
        for write in page.writes {
            let key = SyncUpJournalReconciler.EntryKey(soup: page.soups[Int(write.soup)], id: write.entryId)
            let ticket = write.ticket
            switch results[ticket.job] {
            case .success(let result):
                sentBefore[key] = SentWrite(journalId: ticket.journalId) { SyncUpSender.bulkOutcome(result.rows[Int(ticket.row)], of: $0, in: result) }
            case .failure(let error):
                let message = "Bulk job \(jobs.id(of: ticket.job)): \(error)"
                sentBefore[key] = SentWrite(journalId: ticket.journalId) { _ in .uncertain(message) }
            case nil:
                continue
            }
        }
        var trees = try await target.trees(for: page.ids, in: store)
        // A tally of the page's own, merged into the run's (which then keeps no per-entry state).
        var pageTally = Tally()
        defer { tally.merge(pageTally) }
        holdBack(&trees, heldBack, tally: &pageTally)
        let outcome = try await syncPage(&trees, transport: .bulk, tally: &pageTally, sentBefore: sentBefore, conflictsBefore: page.conflicts)
        // A spent API budget or a refused login stops the sync up once what is known is saved.
        for case .failure(let error as OrgClientError) in results.values {
            switch error {
            case .requestLimitExceeded, .authenticationFailed: throw error
            default: continue
            }
        }
        return outcome
    }

    /// Saves the usual Bulk page — every write a create the org made, with no conflict, nothing
    /// held back and no reference to carry the new ids elsewhere — without the general passes:
    /// each entry takes its new id and is marked clean (under LEAVE_IF_CHANGED, held as created),
    /// its journal entry settled, exactly as those passes would leave it. Any other page (a single
    /// write that is not such a create is enough) returns `nil` with nothing done, for the general
    /// passes to save.
    private func saveCreates(_ page: SpooledPage, results: [Int32: Result<BulkIngestResult, any Error>], heldBack: [String: Set<Int64>],
                             tally: inout Tally) async throws -> PageOutcome? {
        guard !settings.dryRun, !target.hasChildren, target.references.isEmpty, page.conflicts.isEmpty,
              page.soups.count == 1, page.entryIds.count == page.ids.count else { return nil }
        let leaveIfChanged = settings.mergeMode == .leaveIfChanged
        let soup = page.soups[0]
        if let held = heldBack[soup], page.ids.contains(where: held.contains) { return nil }
        var tickets: [Int64: SyncUpBulkJobs.Ticket] = [:]
        tickets.reserveCapacity(page.entryIds.count)
        for write in page.writes { tickets[write.entryId] = write.ticket }
        var trees = try await target.trees(for: page.ids, in: store)
        guard trees.count == page.ids.count else { return nil }
        var changes = SoupChangeSet()
        changes.confirmEverySave = [soup]
        changes.settledJournalIds.reserveCapacity(trees.count)
        var rows: [SyncUpResultFiles.Row] = []
        rows.reserveCapacity(trees.count)
        let planner = SyncUpPlanner()
        for index in trees.indices {
            guard trees[index].children.isEmpty, trees[index].parent.soup == soup, let ticket = tickets[trees[index].parent.entryId],
                  case .success(let result)? = results[ticket.job] else { return nil }
            let stored = trees[index].parent.entry
            let plan = planner.plan(&trees[index], index: index)
            guard plan.settled.isEmpty, plan.operations.count == 1, let operation = plan.operations.first, operation.kind == .create,
                  case .succeeded(let id?) = SyncUpSender.bulkOutcome(result.rows[Int(ticket.row)], of: operation, in: result) else { return nil }
            var record = trees[index].parent
            if leaveIfChanged && !SyncUpDateReads.markedAsCreated(field: record.modificationDateField) { return nil }
            let localId = record.id.flatMap { SyncField.isLocalId($0) ? $0 : nil }
            record.id = id
            record.entry.markClean()
            if leaveIfChanged { record.entry.markAsCreated(dateField: record.modificationDateField) }
            changes.save(record.entry, in: soup, replacing: stored)
            changes.settledJournalIds.append(ticket.journalId)
            rows.append(SyncUpResultFiles.Row(
                kind: .success, object: record.objectType ?? "unknown", operation: SyncUpOperation.Kind.create.rawValue,
                entryId: record.entryId, localId: localId, id: record.hasServerId ? record.id : nil, errorCode: nil, errorMessage: nil,
                fields: operation.fields, soup: soup))
        }
        // In a task of its own, as every page's save: what the org confirmed is saved even when
        // the run is being stopped.
        let (store, changesToSave) = (store, changes)
        try await Task { try await store.apply(changesToSave) }.value
        var pageTally = Tally()
        for row in rows {
            pageTally.settle(SyncUpJournalReconciler.EntryKey(soup: soup, id: row.entryId))
            pageTally.result.add(StageCounts.created, object: row.object)
        }
        tally.merge(pageTally)
        try await files.add(rows)
        return PageOutcome(settledRoots: Set(page.ids), sawUncertain: false)
    }
}
