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
        /// Every write a create the store can confirm in SQL once the org made it (see
        /// ``SoupStore/confirmCreates(_:in:idField:settling:)``), with each entry's
        /// `_soupLastModifiedDate` as read, in the order of `entryIds`.
        var createdSince: [Int64]?

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
        // Whether the page, once the org has made its records, can be saved in SQL (`saveCreates`).
        var dates: [Int64: Int64]? = settings.mergeMode == .overwrite && target is SoupSyncUpTarget && conflicts.isEmpty ? [:] : nil
        for index in trees.indices where conflicts[index] == nil {
            let plan = planner.plan(&trees[index], index: index)
            operations += plan.operations
            let record = trees[index].parent
            if dates != nil, trees[index].children.isEmpty, plan.settled.isEmpty, plan.operations.count == 1, plan.operations[0].kind == .create,
               record.createFields?.allSatisfy(JSONObject.isDataField) ?? true,
               SoupStore.canConfirmCreate(of: record.entry, idField: record.idField),
               let date = record.entry[SyncField.soupLastModifiedDate]?.integerValue {
                dates?[record.entryId] = date
            } else {
                dates = nil
            }
        }
        var spooled = SpooledPage(ids: page, conflicts: Dictionary(uniqueKeysWithValues: conflicts.map { (trees[$0.key].parent.entryId, $0.value) }))
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
        if let dates, dates.count == page.count, spooled.entryIds.count == page.count {
            spooled.createdSince = spooled.entryIds.compactMap { dates[$0] }
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
        if let outcome = try await saveCreates(page, results: results, heldBack: heldBack, jobs: jobs, tally: &tally) { return outcome }
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

    /// Saves the usual Bulk page — every write a create the org made, spooled as one the store can
    /// confirm in SQL (OVERWRITE, no conflict, the built-in single-soup target), nothing held back
    /// — without loading it again: each entry takes its new id and is marked clean, with what the
    /// org confirmed, and its journal entry settles, exactly as the general passes would leave it.
    /// Any other page (one write that is not such a create, or an entry changed since it was
    /// read) returns `nil` with nothing done, for the general passes to save.
    private func saveCreates(_ page: SpooledPage, results: [Int32: Result<BulkIngestResult, any Error>], heldBack: [String: Set<Int64>],
                             jobs: SyncUpBulkJobs, tally: inout Tally) async throws -> PageOutcome? {
        guard let dates = page.createdSince, let target = target as? SoupSyncUpTarget, !settings.dryRun, page.soups.count == 1 else { return nil }
        let soup = page.soups[0]
        if let held = heldBack[soup], page.ids.contains(where: held.contains) { return nil }
        var created: [SoupStore.CreatedRecord] = []
        created.reserveCapacity(dates.count)
        var journalIds: [Int64] = []
        journalIds.reserveCapacity(dates.count)
        var objects: [String] = []
        objects.reserveCapacity(dates.count)
        for (offset, write) in page.writes.enumerated() {
            // What `SyncUpSender.bulkOutcome` calls a create the org made: processed, no error, an id.
            guard case .success(let result)? = results[write.ticket.job] else { return nil }
            let row = result.rows[Int(write.ticket.row)]
            guard row.processed, row.error == nil, let id = row.id, !id.isEmpty else { return nil }
            created.append(SoupStore.CreatedRecord(entryId: write.entryId, lastModified: dates[offset], id: id))
            journalIds.append(write.ticket.journalId)
            objects.append(jobs.object(of: write.ticket.job))
        }
        // In a task of its own, as every page's save: what the org confirmed is saved even when
        // the run is being stopped.
        let (store, idField, settled) = (store, target.idFieldName, journalIds)
        let confirming = created
        guard let written = try await Task(operation: {
            try await store.confirmCreates(confirming, in: soup, idField: idField, settling: settled)
        }).value else { return nil }
        var rows: [SyncUpResultFiles.Row] = []
        rows.reserveCapacity(written.count)
        var pageTally = Tally()
        for (offset, entry) in written.enumerated() {
            // The fields sent, from the entry's data fields as written (the ones it was sent with).
            let data = (try? JSONParser.parse(entry.confirmed).value.objectValue) ?? JSONObject()
            let id = created[offset].id
            rows.append(SyncUpResultFiles.Row(
                kind: .success, object: objects[offset], operation: SyncUpOperation.Kind.create.rawValue, entryId: entry.entryId,
                localId: entry.previousId.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: SyncField.isLocalId(id) ? nil : id,
                errorCode: nil, errorMessage: nil, fields: target.record(data).payload(for: .create), soup: soup))
            pageTally.settle(SyncUpJournalReconciler.EntryKey(soup: soup, id: entry.entryId))
            pageTally.result.add(StageCounts.created, object: objects[offset])
        }
        tally.merge(pageTally)
        try await files.add(rows)
        return PageOutcome(settledRoots: Set(page.ids), sawUncertain: false)
    }
}
