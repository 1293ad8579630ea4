import Connectors
import Foundation
import Formats
import JSON
import Soups

/// A page's outcome saved in one transaction: new ids carried everywhere they were written,
/// modification dates refreshed, and the entries, journal and error files updated.
extension SyncUpEngine {
    /// ``commit`` in a task of its own: once the org has answered, what it confirmed is saved
    /// even when the run is being stopped (a SIGTERM cancels the stage's task, and with it any
    /// store write it starts), so the stage reports it and the next run has nothing to adopt.
    func commitEvenIfStopping(_ trees: [SyncUpTree], _ ledger: SyncUpPageLedger, tally: inout Tally) async throws -> PageOutcome {
        let before = tally
        let (outcome, after) = try await Task { [self] in
            var saved = before
            let outcome = try await commit(trees, ledger, tally: &saved)
            return (outcome, saved)
        }.value
        tally = after
        return outcome
    }

    /// Records the org created take their server id everywhere their `local_` id was written —
    /// in the target's reference fields of any soup, beyond the page's own trees (a child in
    /// another page, a record of another object) — in the page's transaction.
    func propagateNewIds(_ trees: [SyncUpTree], _ ledger: SyncUpPageLedger, into changes: inout SoupChangeSet) async throws {
        guard !target.references.isEmpty else { return }
        var created: [String: [String: String]] = [:]
        for (key, outcome) in ledger.final where outcome.isSuccess {
            let record = trees[key.tree][key.child]
            guard let original = ledger.asRead[key]?.id, SyncField.isLocalId(original), record.hasServerId, let id = record.id else { continue }
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
    func recreateMissingParents(_ trees: inout [SyncUpTree], among indices: Set<Int>, applier: SyncUpResultApplier,
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
    func readsBack(_ transport: SyncUpTransport) -> Bool {
        settings.mergeMode == .leaveIfChanged && !settings.dryRun && transport == .collections
    }

    /// Each object's modification date field among the trees' records.
    static func dateFields(_ trees: [SyncUpTree]) -> [String: String] {
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
    func refreshModificationDates(_ trees: inout [SyncUpTree], _ ledger: SyncUpPageLedger, readBack: [RecordKey: JSONObject],
                                  answered: (@Sendable () -> Void)?, inFlight: SyncUpInFlight.Part?) async throws {
        let wanted = applyKnownDates(&trees, ledger, readBack: readBack)
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
    func applyKnownDates(_ trees: inout [SyncUpTree], _ ledger: SyncUpPageLedger,
                         readBack: [RecordKey: JSONObject]) -> [String: (field: String, keys: [RecordKey])] {
        let withChildWrites = Set(ledger.kinds.keys.lazy.filter { $0.child != nil }.map(\.tree))
        let ownWriter = target is any SyncUpRecordWriter
        var wanted: [String: (field: String, keys: [RecordKey])] = [:]
        for (key, outcome) in ledger.final where outcome.isSuccess {
            let record = trees[key.tree][key.child]
            guard record.hasServerId, let type = record.objectType, !record.isDirty else { continue }
            if let date = readBack[key]?[record.modificationDateField], date != .null {
                trees[key.tree][key.child].entry[record.modificationDateField] = date
                trees[key.tree][key.child].entry[SyncField.asCreated] = nil
                continue
            }
            if ledger.kinds[key] == .create, !ownWriter, key.child != nil || !withChildWrites.contains(key.tree),
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
    func commit(_ trees: [SyncUpTree], _ ledger: SyncUpPageLedger, tally: inout Tally) async throws -> PageOutcome {
        var changes = Self.changeSet(trees, ledger)
        var page = PageOutcome()
        // The store writes the page while its counts and result rows are worked out; they are
        // recorded once the write has committed.
        var writing: PendingWrite<AppliedChanges>?
        if !settings.dryRun {
            try await propagateNewIds(trees, ledger, into: &changes)
            writing = store.startApply(try await store.prepare(changes))
        }
        var unsettled = Set<Int>()
        var rows: [SyncUpResultFiles.Row] = []
        var counted: [(key: SyncUpJournalReconciler.EntryKey, count: String, object: String)] = []
        var uncertain: [(key: SyncUpJournalReconciler.EntryKey, row: SyncUpResultFiles.Row)] = []
        for (key, outcome) in ledger.final.sorted(by: { ($0.key.tree, $0.key.child ?? -1) < ($1.key.tree, $1.key.child ?? -1) }) {
            let record = trees[key.tree][key.child]
            guard let (countKey, row) = resultRow(key, outcome, record: record, ledger) else {
                unsettled.insert(key.tree)
                continue
            }
            let entryKey = SyncUpJournalReconciler.EntryKey(soup: record.soup, id: record.entryId)
            if countKey == StageCounts.uncertain {
                unsettled.insert(key.tree)
                page.sawUncertain = true
                uncertain.append((entryKey, row))
            } else {
                counted.append((entryKey, countKey, row.object))
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

    /// The page's store changes: the entries of every tree with an outcome saved (or removed),
    /// and the journal entries its outcomes settle.
    static func changeSet(_ trees: [SyncUpTree], _ ledger: SyncUpPageLedger) -> SoupChangeSet {
        var changes = SoupChangeSet()
        let touched = Set(ledger.final.keys.map(\.tree))
        for index in touched.sorted() {
            for (child, record) in trees[index].positionedRecords {
                let key = RecordKey(tree: index, child: child)
                if ledger.removed.contains(key) {
                    changes.delete(record.entryId, from: record.soup)
                } else {
                    let read = ledger.asRead[key].flatMap { $0.soup == record.soup && $0.entryId == record.entryId ? $0.entry : nil }
                    changes.save(record.entry, in: record.soup, confirmed: !record.isDirty, replacing: read)
                }
            }
        }
        for (key, ids) in ledger.results.journalIds where ledger.final[key]?.isSettled == true {
            changes.settledJournalIds.append(contentsOf: ids)
        }
        changes.settledJournalIds.append(contentsOf: Set(ledger.results.refusedJournalIds).subtracting(changes.settledJournalIds))
        return changes
    }

    /// What a record's outcome counts as and its result row; `nil` for a record not sent.
    func resultRow(_ key: RecordKey, _ outcome: SyncUpOutcome, record: SyncUpRecord,
                   _ ledger: SyncUpPageLedger) -> (count: String, row: SyncUpResultFiles.Row)? {
        let kind = ledger.kinds[key]
        let operation = kind?.rawValue ?? "delete"
        let countKey: String
        let fileKind: SyncUpResultFiles.Kind
        var action = operation == "upsert" ? "create" : operation
        switch outcome {
        case .matched:
            // A match for a record an earlier attempt may have applied may be that attempt's
            // own create: counted created, so no record is counted twice.
            countKey = ledger.results.mayHaveBeenApplied.contains(key) ? StageCounts.created : StageCounts.updated
            fileKind = settings.dryRun ? .plan : .success
        case .succeeded, .discarded, .planned:
            countKey = kind == .create || kind == .upsert ? StageCounts.created : kind == .update ? StageCounts.updated : StageCounts.deleted
            fileKind = settings.dryRun ? .plan : .success
        case .failed(let error):
            countKey = error.code == SyncUpError.conflict ? StageCounts.conflicts : settings.dryRun ? StageCounts.rejected : StageCounts.failed
            fileKind = settings.dryRun ? .plan : .error
            if settings.dryRun { action = error.code == SyncUpError.conflict ? "conflict" : "reject" }
        case .uncertain, .unresolved:
            countKey = StageCounts.uncertain
            fileKind = .error
        case .notSent:
            return nil
        }
        let error = outcome.error
        let localId = ledger.asRead[key]?.id
        let row = SyncUpResultFiles.Row(
            kind: fileKind, object: record.objectType ?? "unknown", operation: settings.dryRun ? action : operation, entryId: record.entryId,
            localId: localId.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: record.hasServerId ? record.id : nil,
            errorCode: error?.code ?? (outcome.isUncertain ? SyncUpError.uncertain : outcome.uncertainMessage != nil ? SyncUpError.unresolvedReference : nil),
            errorMessage: error?.message ?? outcome.uncertainMessage, fields: ledger.sent[key] ?? JSONObject(), soup: record.soup)
        return (countKey, row)
    }
}
