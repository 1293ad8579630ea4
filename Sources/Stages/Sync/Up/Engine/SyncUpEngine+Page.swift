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
}
