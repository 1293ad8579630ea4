import Connectors
import JSON
import Soups

extension SyncUpEngine {
    /// A page whose writes went into Bulk jobs: what is needed to save it once they end (a job of
    /// a million rows never holds its records in memory: the page is loaded again then, or, for a
    /// page of plain creates, its entries patched in place).
    struct SpooledPage {
        var ids: [Int64]
        /// LEAVE_IF_CHANGED conflicts found before sending, by root entry id.
        var conflicts: [Int64: SyncUpError]
        var soups: [String] = []
        /// The entries written, in the order of their tickets.
        var entryIds: [Int64] = []
        /// Runs of writes into consecutive rows of one job with consecutive journal entries (a page
        /// makes a few): a page of a million-record sync keeps 8 bytes a write, not a ticket each.
        var runs: [(soup: Int32, first: SyncUpBulkJobs.Ticket, count: Int32)] = []
        /// Set when every write is a plain create (see ``SpooledCreates``).
        var creates: SpooledCreates?

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

    /// What saving a page of plain creates — one record each, no children, no reference, no
    /// conflict — needs once its jobs end, without loading its entries again (see `saveCreates`).
    struct SpooledCreates {
        var objectType: String
        var idField: String
        var dateField: String
        /// The fields sent, in the order a result file lists them.
        var fields: [String]
        /// Whether the fields sent are the target's list (nested values included); without a
        /// list, objects and arrays are not sent.
        var listed: Bool
        /// The entries' `_soupLastModifiedDate`s as spooled, in runs in the order of the writes
        /// (one run or a few: a page staged or marked together shares its date): an entry changed
        /// since sends the page through the general passes.
        var lastModified: [(value: Int64, count: Int32)] = []

        mutating func append(lastModified value: Int64) {
            if let last = lastModified.last, last.value == value {
                lastModified[lastModified.count - 1].count += 1
            } else {
                lastModified.append((value, 1))
            }
        }

        /// The date of each write, in order.
        var lastModifiedValues: [Int64] { lastModified.flatMap { repeatElement($0.value, count: Int($0.count)) } }

        /// Adds `plan` of `tree` to `creates`; `false` when it is not a plain create like the
        /// page's others.
        static func add(_ plan: SyncUpPlanner.TreePlan, of tree: SyncUpTree, to creates: inout SpooledCreates?,
                        fieldsSeen: inout Set<String>) -> Bool {
            let record = tree.parent
            guard tree.children.isEmpty, plan.settled.isEmpty, plan.operations.count == 1, let operation = plan.operations.first,
                  operation.kind == .create, let objectType = record.objectType else { return false }
            if creates == nil {
                creates = SpooledCreates(objectType: objectType, idField: record.idField, dateField: record.modificationDateField, fields: [],
                                         listed: record.createFields != nil)
            }
            guard creates!.objectType == objectType, creates!.idField == record.idField,
                  creates!.dateField == record.modificationDateField, creates!.listed == (record.createFields != nil) else { return false }
            for name in operation.fields.keys where fieldsSeen.insert(name).inserted { creates!.fields.append(name) }
            return true
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
    /// next. Once the pages end, each is saved from its jobs' results: a page of plain creates
    /// patched in place, any other loaded again and saved through the same passes as any page (a
    /// record deleted on the server re-created, a locked row sent again). Pages written into jobs
    /// are saved even after a stop or a failure: the jobs already closed run at the org; a job
    /// left open leaves its records uncertain, and the next run aborts it. Jobs a failure leaves
    /// unread are read by the next run, from the journal.
    func runBulkJobs(_ ids: [Int64], heldBack: [String: Set<Int64>], round: Int, tally: inout Tally) async throws -> BulkRun {
        let sender = SyncUpSender(client: client, store: store, syncName: settings.syncName, maxInFlight: settings.maxInFlight,
                                  writer: nil, checkBudget: budgetCheck, breaker: breaker)
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
        let conflicts = try await treesLeftAlone(trees)
        var operations: [SyncUpOperation] = []
        operations.reserveCapacity(trees.count)
        let planner = SyncUpPlanner()
        // Whether every tree is a plain create, with the date of each entry.
        var creates: SpooledCreates?
        var plainCreates = conflicts.isEmpty
        var fieldsSeen = Set<String>()
        var lastModified: [Int64: Int64] = [:]
        for index in trees.indices where conflicts[index] == nil {
            let plan = planner.plan(&trees[index], index: index)
            operations += plan.operations
            guard plainCreates else { continue }
            let record = trees[index].parent
            if let date = record.entry[SyncField.soupLastModifiedDate]?.integerValue,
               SpooledCreates.add(plan, of: trees[index], to: &creates, fieldsSeen: &fieldsSeen) {
                lastModified[record.entryId] = date
            } else {
                plainCreates = false
            }
        }
        var spooled = SpooledPage(ids: page, conflicts: SyncUpConflictChecker.byRoot(conflicts, in: trees))
        var soups: [String: Int32] = [:]
        let tickets = try await jobs.add(operations, checkBudget: budgetCheck)
        spooled.entryIds.reserveCapacity(tickets.count)
        if plainCreates, var creates {
            // In the order of the writes; a date not known (none is) matches no entry: the patch refuses.
            for (operation, _) in tickets { creates.append(lastModified: lastModified[operation.entryId] ?? -1) }
            spooled.creates = creates
        }
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

    /// Saves a page from its jobs' results: patched in place when it is a page of plain creates,
    /// else loaded again and saved through the general passes. A job that could not be closed or
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
    /// held back and no reference to carry the new ids elsewhere — without the general passes or
    /// loading its entries again: each entry's JSON is patched in place (``SoupStore/patch(_:)``)
    /// with its new id, marked clean (under LEAVE_IF_CHANGED, held as created) and its data
    /// recorded as confirmed, its journal entry settled, exactly as those passes would leave it.
    /// Any other page (a single write that is not such a create is enough, or an entry changed
    /// since it was spooled) returns `nil` with nothing done, for the general passes to save.
    private func saveCreates(_ page: SpooledPage, results: [Int32: Result<BulkIngestResult, any Error>], heldBack: [String: Set<Int64>],
                             tally: inout Tally) async throws -> PageOutcome? {
        guard !settings.dryRun, !target.hasChildren, target.references.isEmpty, page.conflicts.isEmpty,
              page.soups.count == 1, page.entryIds.count == page.ids.count, let creates = page.creates else { return nil }
        let leaveIfChanged = settings.mergeMode == .leaveIfChanged
        if leaveIfChanged && !SyncUpDateReads.markedAsCreated(field: creates.dateField) { return nil }
        let soup = page.soups[0]
        if let held = heldBack[soup], page.ids.contains(where: held.contains) { return nil }
        var patch = SoupPatch(soup: soup, fields: SyncField.cleanValues.map { ($0.name, $0.value) }
                                  + (leaveIfChanged ? SyncField.asCreatedValues(dateField: creates.dateField) : []),
                              valueField: creates.idField)
        patch.confirming = true
        patch.reading = [creates.idField] + creates.fields
        patch.entries.reserveCapacity(page.entryIds.count)
        patch.settledJournalIds.reserveCapacity(page.entryIds.count)
        for (write, lastModified) in zip(page.writes, creates.lastModifiedValues) {
            guard case .success(let result)? = results[write.ticket.job],
                  case .succeeded(let id?) = SyncUpSender.bulkOutcome(result.rows[Int(write.ticket.row)], kind: .create, recordId: nil, in: result)
            else { return nil }
            patch.entries.append(SoupPatch.Entry(id: write.entryId, lastModified: lastModified, value: .string(id)))
            patch.settledJournalIds.append(write.ticket.journalId)
        }
        // In a task of its own, as every page's save: what the org confirmed is saved even when
        // the run is being stopped.
        let (store, patchToApply) = (store, patch)
        guard let read = try await Task(operation: { try await store.patch(patchToApply) }).value else {
            logger.debug("sync up \(settings.syncName): a page of \(page.entryIds.count) create(s) saved through the general passes (an entry changed since it was sent, or the soup's indexes need them)")
            return nil
        }
        var rows: [SyncUpResultFiles.Row] = []
        rows.reserveCapacity(read.count)
        var pageTally = Tally()
        for (entry, values) in zip(patch.entries, read) {
            var fields = JSONObject()
            fields.reserveCapacity(creates.fields.count)
            // The fields this record sent: without a list, its nested values were not.
            for (name, value) in zip(creates.fields, values.dropFirst()) {
                if let value, creates.listed || SyncUpRecord.isSentUnlisted(value) { fields[name] = value }
            }
            let localId = values[0]?.stringValue.flatMap { SyncField.isLocalId($0) ? $0 : nil }
            rows.append(SyncUpResultFiles.Row(
                kind: .success, object: creates.objectType, operation: SyncUpOperation.Kind.create.rawValue, entryId: entry.id,
                localId: localId, id: entry.value.stringValue, errorCode: nil, errorMessage: nil, fields: fields, soup: soup))
            pageTally.settle(SyncUpJournalReconciler.EntryKey(soup: soup, id: entry.id))
            pageTally.result.add(StageCounts.created, object: creates.objectType)
        }
        tally.merge(pageTally)
        try await files.add(rows)
        return PageOutcome(settledRoots: Set(page.ids), sawUncertain: false)
    }
}
