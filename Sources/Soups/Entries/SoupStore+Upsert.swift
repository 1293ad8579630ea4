import Foundation
import GRDB
import JSON

extension SoupStore {
    /// Inserts or updates entries in one transaction and returns them as stored (with
    /// `_soupEntryId` and `_soupLastModifiedDate`).
    ///
    /// An entry with `_soupEntryId` updates that entry. Otherwise, with `externalIdPath` other than
    /// `_soupEntryId`, the entry whose indexed `externalIdPath` equals the entry's value is updated
    /// (none: a new entry; several: an error). Sync flags are normalized to JSON booleans.
    @discardableResult
    public func upsert(
        _ entries: [JSONObject], into soupName: String, externalIdPath: String = SyncField.soupEntryId
    ) async throws -> [JSONObject] {
        Array(try await upsert(try await prepare(entries, for: soupName), externalIdPath: externalIdPath))
    }

    /// Computes the JSON text and index values of entries for `soupName`, on both cores, outside
    /// any transaction. A bulk load prepares its next batch while the previous one is written.
    public func prepare(_ entries: [JSONObject], for soupName: String) async throws -> PreparedEntries {
        try await prepare(entries, for: soupName, confirmingAll: false, confirming: [])
    }

    /// ``prepare(_:for:)``, with the data fields of the entries at `positions` (indexes in
    /// `entries`) recorded as what the org confirmed in the same write (see ``setConfirmed(_:in:)``):
    /// entries staged from records the org returned, new ones included.
    public func prepare(_ entries: [JSONObject], for soupName: String, confirmingAt positions: Set<Int>) async throws -> PreparedEntries {
        try await prepare(entries, for: soupName, confirmingAll: false, confirming: [], confirmingAt: positions)
    }

    /// ``prepare(_:for:)``, with the JSON of the data fields of every entry (`confirmingAll`), of
    /// the entries `confirming` names by `_soupEntryId` or of those at `positions`, written as what
    /// the org confirmed (see ``setConfirmed(_:in:)``); `replacing` holds the stored entries some
    /// replace, by `_soupEntryId` (see ``SoupChangeSet/replaced``).
    func prepare(_ entries: [JSONObject], for soupName: String, confirmingAll: Bool, confirming: Set<Int64>,
                 confirmingAt positions: Set<Int> = [], replacing: [Int64: JSONObject] = [:]) async throws -> PreparedEntries {
        let table = try await pool.read { db in try SoupTable.load(db, soupName: soupName) }
        let prepared = try await Array(entries.indices).concurrentMap { index in
            let entry = entries[index]
            let id = entry.soupEntryId
            let confirmed = confirmingAll || (!positions.isEmpty && positions.contains(index))
                || (!confirming.isEmpty && id.map(confirming.contains) == true)
            return PreparedEntry(entry, table: table, confirming: confirmed, replacing: replacing.isEmpty ? nil : id.flatMap { replacing[$0] })
        }
        return PreparedEntries(soupName: soupName, table: table, entries: prepared)
    }

    /// Writes prepared entries in one transaction, as ``upsert(_:into:externalIdPath:)`` does (they
    /// are prepared again should the soup's indexes have changed since).
    @discardableResult
    public func upsert(_ prepared: PreparedEntries, externalIdPath: String = SyncField.soupEntryId) async throws -> StoredEntries {
        try await startUpsert(prepared, externalIdPath: externalIdPath).value()
    }

    /// Queues the write of prepared entries on the store's writer and returns at once. Writes
    /// queued one after the other run in that order, back to back: a bulk load keeps the next
    /// batch queued so the writer never waits for the loader to be scheduled.
    /// `confirming` records, in the same transaction, what the org confirmed for stored entries the
    /// write leaves alone (by `_soupEntryId`, as ``setConfirmed(_:in:)``).
    public func startUpsert(_ prepared: PreparedEntries, externalIdPath: String = SyncField.soupEntryId,
                            confirming: [Int64: JSONObject] = [:]) -> PendingUpsert {
        let pending = PendingUpsert()
        pool.asyncWrite({ db in
            if !confirming.isEmpty { try Self.setConfirmed(confirming, in: prepared.soupName, db) }
            return try self.write(prepared, externalIdPath: externalIdPath, db)
        }, completion: { _, result in
            pending.finish(result.map { StoredEntries(prepared: $0.entries, ids: $0.ids, lastModified: $0.modified) })
        })
        return pending
    }

    /// Writes prepared entries (preparing them again if the soup's indexes changed meanwhile);
    /// returns the entries as written, their `_soupEntryId`s and the `_soupLastModifiedDate` they
    /// were given.
    func write(
        _ prepared: PreparedEntries, externalIdPath: String, _ db: Database
    ) throws -> (entries: [PreparedEntry], ids: [Int64], modified: Int64) {
        let table = try SoupTable.load(db, soupName: prepared.soupName)
        if externalIdPath != SyncField.soupEntryId && table.spec.index(forPath: externalIdPath) == nil {
            throw SoupStoreError.notIndexed(soup: prepared.soupName, path: externalIdPath)
        }
        let entries = table.spec == prepared.table.spec
            ? prepared.entries : try prepared.entries.map { PreparedEntry(try $0.object(), table: table, confirming: $0.confirmed != nil) }
        let writer = try EntryWriter(table: table, filters: valueFilters(for: table), db: db)
        var ids: [Int64] = []
        ids.reserveCapacity(entries.count)
        for entry in entries {
            ids.append(try writer.write(entry, externalIdPath: externalIdPath))
        }
        try writer.finish()
        return (entries, ids, writer.now)
    }
}
