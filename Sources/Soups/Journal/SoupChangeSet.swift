import GRDB
import JSON

/// Changes to several soups applied in one transaction: what a sync up learned from one batch of
/// answers (entries saved, entries removed, values the org confirmed, journal entries settled).
public struct SoupChangeSet: Sendable {
    /// Entries to save, by soup (updated by `_soupEntryId`).
    public var saves: [String: [JSONObject]] = [:]
    /// The stored entries that saved ones replace, as they were read, by soup and `_soupEntryId`:
    /// the store then writes only the columns that change (see ``save(_:in:confirmed:replacing:)``).
    public var replaced: [String: [Int64: JSONObject]] = [:]
    /// `_soupEntryId`s to delete, by soup.
    public var deletions: [String: [Int64]] = [:]
    /// Saved entries (by soup, their `_soupEntryId`s) whose data fields are what the org confirmed
    /// (see ``SoupStore/setConfirmed(_:in:)``): recorded in the entry's own write.
    public var confirmedSaves: [String: Set<Int64>] = [:]
    /// Journal entries whose outcome is now settled.
    public var settledJournalIds: [Int64] = []
    /// Soups whose saved entries all hold what the org just sent (sync down): their data fields
    /// are recorded as confirmed, new entries included.
    public var confirmEverySave: Set<String> = []
    /// Entries from the org stored over the ones they match, in order, after `saves`.
    public var merges: [SoupMerge] = []
    /// A sync's state saved with the changes, in their transaction: the progress they make is
    /// recorded if and only if they are (a sync down's page and how far the sync has got).
    public var syncState: SyncState?

    public init() {}

    /// Saves `entry` into `soup`; with `confirmed`, its data fields are recorded as what the org
    /// confirmed (an entry known by its `_soupEntryId`). `previous`, the stored entry as it was
    /// read before being changed into `entry`, spares rewriting the index columns that keep their
    /// values; should the stored entry have changed since, the save still writes them all.
    public mutating func save(_ entry: JSONObject, in soup: String, confirmed: Bool = false, replacing previous: JSONObject? = nil) {
        saves[soup, default: []].append(entry)
        if let id = entry.soupEntryId {
            if confirmed { confirm(id, in: soup) }
            if let previous { replaced[soup, default: [:]][id] = previous }
        }
    }

    /// Records the data fields the entry `id` of `soup` is saved with as what the org confirmed.
    public mutating func confirm(_ id: Int64, in soup: String) { confirmedSaves[soup, default: []].insert(id) }

    /// Stores `entries`, which hold what the org sent, over the entries of `soup` holding the same
    /// value at `keyPath` (see ``SoupMerge``).
    public mutating func merge(_ entries: [JSONObject], into soup: String, matching keyPath: String) {
        merges.append(SoupMerge(soup: soup, keyPath: keyPath, entries: entries))
    }

    /// Stores the entries `records` make over the entries of `soup` holding the same value at
    /// `keyPath` (see ``SoupMerge``), prepared from the records' bytes.
    public mutating func merge(_ records: SyncedRecords, into soup: String, matching keyPath: String) {
        merges.append(SoupMerge(soup: soup, keyPath: keyPath, entries: [], records: records))
    }

    /// Deletes the entry `id` of `soup`.
    public mutating func delete(_ id: Int64, from soup: String) { deletions[soup, default: []].append(id) }

    /// `true` when applying would change nothing.
    public var isEmpty: Bool {
        saves.isEmpty && merges.isEmpty && deletions.isEmpty && settledJournalIds.isEmpty && syncState == nil
    }
}

/// A change set made ready to write (``SoupStore/prepare(_:)``): JSON text, index and confirmed
/// values computed.
public struct PreparedChangeSet: Sendable {
    fileprivate var changes: SoupChangeSet
    fileprivate var entries: [PreparedEntries]
    /// The entries of each of `changes.merges`, with its key path.
    fileprivate var merges: [(entries: PreparedEntries, keyPath: String)]
}

extension SoupStore {
    /// Applies a change set atomically: all of it, or (on error) none of it.
    @discardableResult
    public func apply(_ changes: SoupChangeSet) async throws -> AppliedChanges {
        try await startApply(try await prepare(changes)).value()
    }

    /// Makes a change set ready to write, on every core, so the store's single writer spends its
    /// time in SQLite only.
    public func prepare(_ changes: SoupChangeSet) async throws -> PreparedChangeSet {
        var prepared: [PreparedEntries] = []
        for (soup, entries) in changes.saves.sorted(by: { $0.key < $1.key }) {
            prepared.append(try await prepare(entries, for: soup, confirmingAll: changes.confirmEverySave.contains(soup),
                                              confirming: changes.confirmedSaves[soup] ?? [], replacing: changes.replaced[soup] ?? [:]))
        }
        var merges: [(PreparedEntries, String)] = []
        for merge in changes.merges {
            if let records = merge.records, merge.entries.isEmpty {
                merges.append((try await prepare(records, for: merge.soup), merge.keyPath))
                continue
            }
            // Entries and records together: the records built, all prepared alike.
            var entries = merge.entries
            if let records = merge.records { entries += try records.entries(for: merge.soup) }
            merges.append((try await prepare(entries, for: merge.soup, confirmingAll: true, confirming: []), merge.keyPath))
        }
        return PreparedChangeSet(changes: changes, entries: prepared, merges: merges)
    }

    /// Queues a prepared change set's transaction on the store's writer and returns at once (see
    /// ``PendingWrite``): a sync down reads its next page while the store writes this one.
    /// - Parameter previous: a write queued before on this store. This one writes nothing and fails
    ///   with ``SoupStoreError/earlierWriteFailed`` unless that one committed, so it may be queued
    ///   before that one's outcome is known (a page's sync state is never saved past a page lost).
    public func startApply(_ prepared: PreparedChangeSet, after previous: PendingWrite<AppliedChanges>? = nil) -> PendingWrite<AppliedChanges> {
        guard !prepared.changes.isEmpty || previous != nil else {
            let pending = PendingWrite<AppliedChanges>()
            pending.finish(.success(AppliedChanges()))
            return pending
        }
        // The write reads the change set through a loan that whoever awaits it ends, so the
        // writer does not spend its time freeing the page.
        let loan = WriterLoan(prepared)
        let pending = PendingWrite<AppliedChanges>(settled: loan.end)
        pool.asyncWrite({ db in
            // The writer runs writes in turn and finishes each before the next: `previous`, queued
            // before on this store, is done.
            if let previous, previous.succeeded != true {
                assert(previous.succeeded != nil, "startApply(_:after:): the previous write was not queued before on this store")
                throw SoupStoreError.earlierWriteFailed
            }
            let prepared = loan.value
            let changes = prepared.changes
            for entries in prepared.entries {
                _ = try self.write(entries, externalIdPath: SyncField.soupEntryId, db)
            }
            var applied = AppliedChanges()
            for (entries, keyPath) in prepared.merges {
                applied.merges.append(try self.merge(entries, matching: keyPath, db))
            }
            for (soup, ids) in changes.deletions.sorted(by: { $0.key < $1.key }) {
                _ = try Self.delete(ids: ids, from: soup, db)
            }
            try SyncJournal.remove(ids: changes.settledJournalIds, db)
            if let sync = changes.syncState { try SyncStates.save(sync, db) }
            return applied
        }, completion: { _, result in
            pending.finish(result)
        })
        return pending
    }
}
