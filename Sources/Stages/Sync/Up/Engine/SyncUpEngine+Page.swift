import Connectors
import Foundation
import Formats
import JSON
import Soups

/// One page: conflicts checked, writes planned, packed, journaled and sent, answers applied.
extension SyncUpEngine {
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
        var ledger = SyncUpPageLedger(trees)
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
                ledger.final[key] = .failed(error)
                trees[index][key.child].entry[SyncField.lastError] = .string(JSONValue.object(error.json).jsonString)
            }
        }
        let applier = SyncUpResultApplier(mergeMode: settings.mergeMode)
        var pending = Set(trees.indices).subtracting(conflicts.keys)
        // Trees written again after their first request (children after their parent's id, a
        // later pass): a date read back by an earlier request may be stale, so theirs are read after.
        var writtenAgain = Set<Int>()
        let readBack = SyncUpDateReads(fields: readsBack(transport) ? Self.dateFields(trees) : [:])
        // A record deleted on the server is re-created in a later pass; a re-created parent can
        // reveal a child deleted on the server too, hence up to two extra passes for those. A
        // record refused for a passing reason goes again in up to `recordRetries` more.
        let passes = 1 + max(2, settings.recordRetries)
        for pass in 0..<passes {
            let (operations, outcomes) = await plan(&trees, pending, pass: pass, sentBefore: sentBefore, into: &ledger)
            if settings.dryRun {
                for operation in operations.joined() where outcomes[operation.key] == nil { ledger.final[operation.key] = .planned }
                ledger.final.merge(outcomes) { $1 }
                break
            }
            let sender = SyncUpSender(client: client, store: store, syncName: settings.syncName, maxInFlight: settings.maxInFlight,
                                      writer: target as? any SyncUpRecordWriter, checkBudget: budgetCheck,
                                      readBack: readBack, inFlight: inFlight, breaker: breaker)
            ledger.results.outcomes = outcomes
            let phases = SyncUpPacker(transport: transport, readBack: readBack).phases(operations)
            if pass > 0 { writtenAgain.formUnion(pending) }
            for phase in phases.dropFirst() { writtenAgain.formUnion(phase.lazy.flatMap(\.operations).map(\.key.tree)) }
            if pass == 0, let beforeSending { try await beforeSending() }
            do {
                try await sender.send(phases, into: &ledger.results)
            } catch {
                // Save what the org confirmed before stopping, with the dates known without a request.
                _ = applier.apply(ledger.results.outcomes, kinds: ledger.kinds, to: &trees, removed: &ledger.removed, final: &ledger.final,
                                  allowRerun: false)
                if settings.mergeMode == .leaveIfChanged && !settings.dryRun {
                    applyKnownDates(&trees, ledger, readBack: ledger.freshReadBack(except: writtenAgain))
                }
                _ = try await commitEvenIfStopping(trees, ledger, tally: &tally)
                throw error
            }
            let passResult = applier.apply(ledger.results.outcomes, kinds: ledger.kinds, to: &trees, removed: &ledger.removed,
                                           final: &ledger.final, allowRerun: pass < 2)
            let rerun = treesToRerun(passResult, ledger, pass: pass)
            guard pass < passes - 1, !rerun.isEmpty else { break }
            // A busy org is given a moment; children only waiting for their parent's id go at once.
            let busy = Set(ledger.final.compactMap { key, outcome in
                outcome.error.map { $0.isTransient && $0.code != SyncUpError.siblingParentFailed } == true ? key.tree : nil
            })
            if !busy.isDisjoint(with: rerun) { try await Task.sleep(for: Self.retryPause(afterPass: pass)) }
            do {
                try await recreateMissingParents(&trees, among: passResult.parentsToCheck, applier: applier, inFlight: inFlight)
            } catch where SyncUpBreaker.isNoAnswer(error) != nil {
                // Whether those parents are gone is unknown: the children go again under them, and
                // a refusal for a missing parent re-creates it then.
            }
            pending = rerun
        }
        return try await finishPage(&trees, ledger, readBack: ledger.freshReadBack(except: writtenAgain), answered: answered,
                                    inFlight: inFlight, tally: &tally)
    }

    /// One pass's operations, by tree, for the `pending` trees — each record's planned kind and
    /// fields in the ledger — and the outcomes known without sending: a write a Bulk job already
    /// carried (`sentBefore`, first pass), a record the dry run's validator refuses, one the
    /// planner settles (discarded, unresolved).
    func plan(_ trees: inout [SyncUpTree], _ pending: Set<Int>, pass: Int, sentBefore: [SyncUpJournalReconciler.EntryKey: SentWrite],
              into ledger: inout SyncUpPageLedger) async -> (operations: [[SyncUpOperation]], outcomes: [RecordKey: SyncUpOutcome]) {
        let planner = SyncUpPlanner()
        var operations: [[SyncUpOperation]] = []
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        let plans = pending.sorted().map { index in planner.plan(&trees[index], index: index) }
        // A dry run reads the parent keys of the whole page at once.
        if pass == 0, let validator { await validator.readParentKeys(plans.flatMap(\.operations)) }
        for plan in plans {
            var treeOperations: [SyncUpOperation] = []
            for operation in plan.operations {
                ledger.kinds[operation.key] = operation.kind
                ledger.sent[operation.key] = operation.fields
                if pass == 0, let write = sentBefore[SyncUpJournalReconciler.EntryKey(soup: operation.soup, id: operation.entryId)] {
                    let outcome = write.outcome(operation)
                    outcomes[operation.key] = outcome
                    ledger.results.journalIds[operation.key, default: []].append(write.journalId)
                    if let error = outcome.error, error.code != SyncUpError.answerLost { ledger.results.refusedJournalIds.append(write.journalId) }
                } else if let problem = await validator?.problem(operation) {
                    outcomes[operation.key] = .failed(problem)
                } else {
                    treeOperations.append(operation)
                }
            }
            for (key, outcome) in plan.settled {
                outcomes[key] = outcome
                if case .discarded = outcome { ledger.kinds[key] = nil }
            }
            operations.append(treeOperations)
        }
        return (operations, outcomes)
    }

    /// The trees to send again after `pass`: those the applier asks for, and those refused for
    /// a passing reason (row locks, a busy org: up to `recordRetries` times; children only
    /// waiting for a parent's id as passes allow) — never a tree with an uncertain record, which
    /// the journal settles.
    func treesToRerun(_ passResult: SyncUpResultApplier.PassResult, _ ledger: SyncUpPageLedger, pass: Int) -> Set<Int> {
        var rerun = passResult.rerun
        rerun.formUnion(ledger.final.compactMap { key, outcome in
            guard let error = outcome.error, error.isTransient else { return nil }
            return (error.code == SyncUpError.siblingParentFailed ? pass < 2 : pass < settings.recordRetries) ? key.tree : nil
        })
        rerun.subtract(ledger.final.compactMap { key, outcome in outcome.isSettled ? nil : key.tree })
        return rerun
    }

    /// Under LEAVE_IF_CHANGED the new modification dates are taken in, then the page is saved.
    /// When the dates get no answer, the trees with a write the org applied wait, unsaved, for
    /// the journal, and the rest is saved.
    func finishPage(_ trees: inout [SyncUpTree], _ ledger: SyncUpPageLedger, readBack: [RecordKey: JSONObject],
                    answered: (@Sendable () -> Void)?, inFlight: SyncUpInFlight.Part?, tally: inout Tally) async throws -> PageOutcome {
        guard settings.mergeMode == .leaveIfChanged && !settings.dryRun else {
            answered?()
            return try await commitEvenIfStopping(trees, ledger, tally: &tally)
        }
        do {
            try await refreshModificationDates(&trees, ledger, readBack: readBack, answered: answered, inFlight: inFlight)
        } catch {
            guard let noAnswer = SyncUpBreaker.isNoAnswer(error) else { throw error }
            let held = Set(ledger.final.compactMap { $0.value.isSuccess ? $0.key.tree : nil })
            var outcome = try await commitEvenIfStopping(trees, ledger.keepingTrees { !held.contains($0) }, tally: &tally)
            holdUnsaved(ledger.final.keys.filter { held.contains($0.tree) }, ledger, because: noAnswer, tally: &tally)
            outcome.settledRoots.subtract(held.map { trees[$0].parent.entryId })
            outcome.sawUncertain = true
            if let tripped = breaker.tripped { throw tripped }
            return outcome
        }
        return try await commitEvenIfStopping(trees, ledger, tally: &tally)
    }
}
