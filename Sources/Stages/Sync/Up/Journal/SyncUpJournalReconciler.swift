import Connectors
import Foundation
import Formats
import JSON
import SOQL
import Soups

/// Settles the journal a dead run (or a lost answer) left behind before anything is sent again
/// (docs/stages.md, "Lost answers"):
/// - a create or upsert carried by a Bulk job is read back from that job's results (the job is
///   waited for: its rows are applied whenever the org runs it);
/// - any other create is looked for in the org by ``SyncUpCreateFinder`` — batched, parents
///   before the children that reference them, so a child is matched under its *resolved* parent;
///   one match is adopted (its id goes to the entry and to every entry that held the `local_` id),
///   no match once the org can no longer apply the write means it was not applied (sent again),
///   anything else stays *uncertain* and is held back, with its dependants;
/// - an update the org already holds is marked clean under LEAVE_IF_CHANGED (so our own write is
///   not taken for a conflict); upserts, deletes and other updates are safe to send again.
/// Each batch's decisions are saved as they are made, so a run killed while reconciling resumes
/// where it stopped.
struct SyncUpJournalReconciler {
    let client: any OrgClient
    let store: SoupStore
    let syncName: String
    let mergeMode: MergeMode
    let target: any SyncUpTarget

    struct Outcome {
        /// Entries (by soup) still uncertain, or depending on one: not sent in this run.
        var heldBack: [String: Set<Int64>] = [:]
        /// Result-file rows: creates adopted (success) and entries held back (error).
        var rows: [SyncUpResultFiles.Row] = []
        var adopted = 0
        var notApplied = 0
        var heldCount: Int { heldBack.values.reduce(0) { $0 + $1.count } }
    }

    /// A soup entry, by soup and `_soupEntryId`.
    struct EntryKey: Hashable {
        var soup: String
        var id: Int64
    }

    func reconcile() async throws -> Outcome {
        var run = Run(reconciler: self)
        try await run.load()
        if run.journal.isEmpty { return run.outcome }
        try await run.settleTrivial()
        try await run.checkUpdates()
        try await run.readBulkJobs()
        try await run.resolveUpserts()
        try await run.findCreates()
        try await run.saveHeld()
        return run.outcome
    }

    /// One reconciliation's working state.
    struct Run {
        let reconciler: SyncUpJournalReconciler
        var journal: [SyncJournalEntry] = []
        /// The entries concerned, as last saved.
        var entries: [EntryKey: JSONObject] = [:]
        var outcome = Outcome()
        var creates: [SyncJournalEntry] = []
        var updates: [SyncJournalEntry] = []
        var upserts: [SyncJournalEntry] = []
        /// Creates and upserts carried by a Bulk job, by job.
        var bulkWrites: [String: [SyncJournalEntry]] = [:]
        /// Entries that took a server id in this reconciliation.
        var adoptedKeys = Set<EntryKey>()

        init(reconciler: SyncUpJournalReconciler) {
            self.reconciler = reconciler
        }

        var store: SoupStore { reconciler.store }
        var target: any SyncUpTarget { reconciler.target }

        func idField(_ soup: String) -> String { target.idFieldName(inSoup: soup) }

        /// The server id an entry holds, if it has one.
        func serverId(_ key: EntryKey) -> String? {
            guard let id = entries[key]?[idField(key.soup)]?.stringValue, !id.isEmpty, !SyncField.isLocalId(id) else { return nil }
            return id
        }

        mutating func load() async throws {
            journal = try await store.journal.entries(of: reconciler.syncName)
            if let soups = target.journalSoups { journal = journal.filter { soups.contains($0.soupName) } }
            var wanted: [String: Set<Int64>] = [:]
            for entry in journal {
                wanted[entry.soupName, default: []].insert(entry.entryId)
                if let link = entry.link { wanted[link.soupName, default: []].insert(link.entryId) }
            }
            for (soup, ids) in wanted {
                for chunk in ids.sorted().chunked(into: 500) {
                    for entry in try await store.retrieve(ids: chunk, from: soup) {
                        if let id = entry.soupEntryId { entries[EntryKey(soup: soup, id: id)] = entry }
                    }
                }
            }
        }

        /// Settles what needs no question to the org, and sorts the rest.
        mutating func settleTrivial() async throws {
            var changes = SoupChangeSet()
            for entry in journal {
                let key = EntryKey(soup: entry.soupName, id: entry.entryId)
                guard let current = entries[key], current.isDirty else {
                    changes.settledJournalIds.append(entry.id)
                    continue
                }
                switch entry.operation {
                case .upsert:
                    // Safe to send again, but children sent with it refer to its record: while it has
                    // no server id, that record is looked up by external id before anything is sent.
                    if serverId(key) != nil {
                        changes.settledJournalIds.append(entry.id)
                    } else if let job = entry.bulkJobId {
                        bulkWrites[job, default: []].append(entry)
                    } else {
                        upserts.append(entry)
                    }
                case .delete:
                    changes.settledJournalIds.append(entry.id)
                case .update:
                    if reconciler.mergeMode == .leaveIfChanged { updates.append(entry) } else { changes.settledJournalIds.append(entry.id) }
                case .create:
                    if serverId(key) != nil {
                        changes.settledJournalIds.append(entry.id)
                    } else if let job = entry.bulkJobId {
                        bulkWrites[job, default: []].append(entry)
                    } else {
                        creates.append(entry)
                    }
                }
            }
            try await store.apply(changes)
        }

        /// LEAVE_IF_CHANGED: an update the org already holds is ours; the entry is clean and takes
        /// the org's new modification date. One Collections read per 2,000 records.
        mutating func checkUpdates() async throws {
            for (type, group) in Dictionary(grouping: updates, by: \.objectType) {
                for chunk in group.chunked(into: OrgLimits.retrieveByBody) {
                    let dateFields = Set(chunk.map { target.modificationDateFieldName(inSoup: $0.soupName) })
                    let fields = Array(Set(chunk.flatMap(\.payload.keys)).union(dateFields)).sorted()
                    let found: [String: JSONObject]
                    do {
                        found = try await reconciler.client.existingRecords(type, ids: chunk.compactMap(\.recordId), fields: fields)
                    } catch {
                        // Sent again unconfirmed, our own write would be taken for a server change.
                        for journal in chunk { hold(journal, "its update could not be confirmed in the org (\(error))") }
                        continue
                    }
                    var changes = SoupChangeSet()
                    changes.settledJournalIds = chunk.map(\.id)
                    for journal in chunk {
                        let key = EntryKey(soup: journal.soupName, id: journal.entryId)
                        guard let record = found[SalesforceId.key(journal.recordId.map(JSONValue.string))], var entry = entries[key],
                              journal.payload.allSatisfy({ SyncUpValueMatch.same(sent: $0.value, stored: record[$0.key]) }),
                              journal.payload.allSatisfy({ entry[$0.key] == $0.value }) else { continue }
                        let dateField = target.modificationDateFieldName(inSoup: key.soup)
                        if let date = record[dateField] {
                            entry[dateField] = date
                            entry[SyncField.asCreated] = nil
                        }
                        entry.markClean()
                        entries[key] = entry
                        changes.save(entry, in: key.soup, confirmed: true)
                        outcome.rows.append(SyncUpResultFiles.Row(
                            kind: .success, object: journal.objectType, operation: "update", entryId: key.id, localId: nil, id: journal.recordId,
                            errorCode: nil, errorMessage: "updated by an earlier attempt whose answer was lost; confirmed in the org",
                            fields: journal.payload, soup: key.soup))
                    }
                    try await store.apply(changes)
                }
            }
        }

        /// Creates and upserts carried by a Bulk job: the job's own results say what became of each
        /// row, once the job has ended (an upload never finished is aborted). A job the org no
        /// longer knows leaves its writes to be looked for like any other. A row a finished job
        /// does not account for, or whose record another entry already holds (identical rows, one
        /// already saved), is held back: it may have been applied.
        mutating func readBulkJobs() async throws {
            for (job, group) in bulkWrites.sorted(by: { $0.key < $1.key }) {
                let kind: SyncUpOperation.Kind = group[0].operation == .upsert ? .upsert : .create
                let field = kind == .upsert ? target.externalIdFieldName(inSoup: group[0].soupName) : nil
                let records = group.map { ($0.payload, kind == .upsert ? nil : $0.recordId, kind == .upsert ? $0.recordId : nil) }
                let result: BulkIngestResult
                do {
                    // The rows as the job holds them: under the columns its result files name (a job
                    // spanning pages may have columns some of its rows lack).
                    result = try await reconciler.client.bulkIngestResult(jobId: job, rowCount: group.count) { columns in
                        SyncUpBulkTable(kind: kind, externalIdField: field, columns: columns, records: records).rows
                    }
                } catch let error as OrgAPIError where error.status == 404 {
                    for journal in group {
                        if journal.operation == .upsert { upserts.append(journal) } else { creates.append(journal) }
                    }
                    continue
                } catch {
                    for journal in group {
                        hold(journal, "Bulk job \(job) could not be read (\(error)); not sent again until it can be")
                    }
                    continue
                }
                let ids = result.rows.compactMap(\.id).map(JSONValue.string)
                var holders: [String: Set<Int64>] = [:]
                for chunk in ids.chunked(into: 500) {
                    for (id, owners) in try await store.entries(in: group[0].soupName, where: idField(group[0].soupName), in: chunk) {
                        holders[SalesforceId.key(id), default: []].formUnion(owners.compactMap(\.soupEntryId))
                    }
                }
                var changes = SoupChangeSet()
                for (journal, row) in zip(group, result.rows) {
                    if row.processed, row.error == nil, let id = row.id {
                        if !(holders[SalesforceId.key(.string(id))] ?? []).subtracting([journal.entryId]).isEmpty {
                            hold(journal, "Bulk job \(job) created \(id) for a row like this one, and another entry holds it")
                        } else {
                            try await adopt(journal, id: id, into: &changes)
                        }
                    } else if !row.processed && result.state == "JobComplete" {
                        hold(journal, "Bulk job \(job) completed, but its results have no row matching this one")
                    } else {
                        changes.settledJournalIds.append(journal.id)
                        outcome.notApplied += 1
                    }
                }
                try await store.apply(changes)
            }
        }

        /// An upsert whose answer was lost may have created its record, and children sent with it
        /// refer to that record: its id is read by external id (200 values a query) and adopted,
        /// so the children are matched under it. Not found, it was not applied once the org can no
        /// longer be executing it; before that (a timed-out request still running) it is held back
        /// with its dependants, since sending its children again could create them twice. If it
        /// cannot be read, the entry and its dependants are held back.
        mutating func resolveUpserts() async throws {
            for (soup, group) in Dictionary(grouping: upserts, by: \.soupName) {
                guard let field = target.externalIdFieldName(inSoup: soup) else {
                    var changes = SoupChangeSet()
                    changes.settledJournalIds = group.map(\.id)
                    try await store.apply(changes)
                    continue
                }
                for chunk in group.chunked(into: OrgLimits.collection) {
                    let values = Set(chunk.compactMap(\.recordId))
                    var found: [String: String] = [:]
                    // What the query misses was not applied only if the org could no longer apply it
                    // when the query ran — not when its answer was read (which can be much later).
                    let askedAt = reconciler.client.clock.now()
                    do {
                        var query = try SOQLQuery(selecting: ["Id", field], from: chunk[0].objectType)
                        query.addFilter(try .isIn(field, values.sorted()))
                        for try await record in reconciler.client.query(query) {
                            if let value = record[field]?.stringValue, let id = record["Id"]?.stringValue { found[value] = id }
                        }
                    } catch {
                        for journal in chunk { hold(journal, "its record could not be looked up by \(field) (\(error))") }
                        continue
                    }
                    var changes = SoupChangeSet()
                    for journal in chunk {
                        if let value = journal.recordId, let id = found[value] {
                            try await adopt(journal, id: id, into: &changes)
                        } else if settled(journal, askedAt: askedAt) {
                            changes.settledJournalIds.append(journal.id)
                            outcome.notApplied += 1
                        } else {
                            hold(journal, "not found by \(field) yet, and the org may still apply it until \(settlesAt(journal)); the next run decides")
                        }
                    }
                    try await store.apply(changes)
                }
            }
        }

        /// `true` when the org could no longer apply the write at `askedAt` (when the query that
        /// did not find it was sent): its deadline had passed, or the org started after it was sent.
        func settled(_ journal: SyncJournalEntry, askedAt: Int64) -> Bool {
            if let restart = reconciler.client.writesSettledBefore, journal.sentAt < restart { return true }
            let settledBy = journal.settledBy ?? (journal.sentAt + SyncUpSender.settlingMs(reconciler.client))
            return askedAt > settledBy
        }

        /// When the org can no longer apply the write, for messages.
        func settlesAt(_ journal: SyncJournalEntry) -> String {
            Timestamp.iso8601(Date(timeIntervalSince1970: Double(journal.settledBy ?? journal.sentAt) / 1000))
        }

        /// Adopts `id` for the journaled create: the entry takes it (clean if it still holds what
        /// was sent; under LEAVE_IF_CHANGED held as created, as after an answered create), and so
        /// does every entry that referenced its `local_` id.
        mutating func adopt(_ journal: SyncJournalEntry, id: String, into changes: inout SoupChangeSet) async throws {
            let key = EntryKey(soup: journal.soupName, id: journal.entryId)
            // Another attempt of the entry's already took the id: counted and listed once.
            guard adoptedKeys.insert(key).inserted, var entry = entries[key] else { changes.settledJournalIds.append(journal.id); return }
            let field = idField(key.soup)
            let localId = entry[field]?.stringValue
            entry[field] = .string(id)
            let linkHolds = journal.link.map { link in
                serverId(EntryKey(soup: link.soupName, id: link.entryId)).map { entry[link.field]?.stringValue == $0 } ?? false
            } ?? true
            if entry[SyncField.locallyDeleted]?.isTruthy == true {
                entry[SyncField.locallyCreated] = .bool(false)
            } else if linkHolds && journal.payload.allSatisfy({ entry[$0.key] == $0.value }) {
                entry.markClean()
            } else {
                entry[SyncField.locallyCreated] = .bool(false)
                entry[SyncField.locallyUpdated] = .bool(true)
                entry[SyncField.lastError] = .null
            }
            let dateField = target.modificationDateFieldName(inSoup: key.soup)
            // Not a parent whose children may have been written after it (the org may have changed
            // it on their account), nor a write of the target's own (which may not create at all).
            if reconciler.mergeMode == .leaveIfChanged && journal.operation == .create && !(target is any SyncUpRecordWriter)
                && (journal.link != nil || !target.hasChildren) && SyncUpDateReads.markedAsCreated(field: dateField) {
                entry.markAsCreated(dateField: dateField)
            }
            entries[key] = entry
            changes.save(entry, in: key.soup, confirmed: !entry.isDirty)
            changes.settledJournalIds.append(journal.id)
            outcome.adopted += 1
            outcome.rows.append(SyncUpResultFiles.Row(
                kind: .success, object: journal.objectType, operation: "create", entryId: key.id, localId: localId, id: id,
                errorCode: nil, errorMessage: "created by an earlier attempt whose answer was lost; found in the org and adopted",
                fields: journal.payload, soup: key.soup))
            if let localId, SyncField.isLocalId(localId) { try await propagate(localId, to: id, from: key.soup, into: &changes) }
        }

        /// Every entry that references `localId` takes the server id instead.
        mutating func propagate(_ localId: String, to id: String, from soup: String, into changes: inout SoupChangeSet) async throws {
            for reference in target.references where reference.referencedSoup == soup {
                let holders = try await store.entries(in: reference.soup, where: reference.field, in: [.string(localId)])[.string(localId)] ?? []
                for stored in holders {
                    guard let entryId = stored.soupEntryId else { continue }
                    let key = EntryKey(soup: reference.soup, id: entryId)
                    var entry = entries[key] ?? stored
                    entry[reference.field] = .string(id)
                    entries[key] = entry
                    if let index = changes.saves[reference.soup]?.firstIndex(where: { $0.soupEntryId == entryId }) {
                        changes.saves[reference.soup]?[index] = entry
                    } else {
                        changes.save(entry, in: reference.soup)
                    }
                    if !entry.isDirty { changes.confirm(entryId, in: reference.soup) }
                }
            }
        }

        /// Keeps the entry dirty and unsent, with the reason in `__last_error__`.
        mutating func hold(_ journal: SyncJournalEntry, _ reason: String) {
            let key = EntryKey(soup: journal.soupName, id: journal.entryId)
            outcome.heldBack[key.soup, default: []].insert(key.id)
            let error = SyncUpError(status: 0, code: SyncUpError.uncertain, message: "a write whose answer was lost: \(reason)")
            if var entry = entries[key] {
                entry[SyncField.lastError] = .string(JSONValue.object(error.json).jsonString)
                entries[key] = entry
            }
            outcome.rows.append(SyncUpResultFiles.Row(
                kind: .error, object: journal.objectType, operation: journal.operation.rawValue, entryId: key.id,
                localId: entries[key]?[idField(key.soup)]?.stringValue.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: nil,
                errorCode: SyncUpError.uncertain, errorMessage: error.message, fields: journal.payload, soup: key.soup))
        }

        /// Saves the held entries' `__last_error__`.
        func saveHeld() async throws {
            var changes = SoupChangeSet()
            for (soup, ids) in outcome.heldBack {
                for id in ids.sorted() { if let entry = entries[EntryKey(soup: soup, id: id)] { changes.save(entry, in: soup) } }
            }
            try await store.apply(changes)
        }
    }
}
