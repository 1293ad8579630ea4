import JSON
import Soups

/// How a record from the org becomes a soup entry: it replaces the stored entry (keeping its
/// `_soupEntryId`), carries `__sync_id__`, and is clean. A custom ``SyncDownTarget`` stores
/// its records through it, as the built-in targets do.
public enum SyncedEntry {
    /// What storing `record` over `existing` means for the counts.
    public enum Change: Sendable {
        case created, updated, unchanged
    }

    /// The entry to save, and the count it makes.
    public static func make(_ record: JSONObject, over existing: JSONObject?, syncId: Int64) -> (entry: JSONObject, change: Change) {
        var entry = entry(for: record, syncId: syncId)
        guard let existing, let id = existing.soupEntryId else { return (entry, .created) }
        entry[SyncField.soupEntryId] = .integer(id)
        return (entry, existing.storesSameSync(as: entry) ? .unchanged : .updated)
    }

    /// The entry `record` becomes, whatever it is stored over: the record with `__sync_id__`, clean
    /// (what a ``SoupMerge`` of a sync down holds).
    public static func entry(for record: JSONObject, syncId: Int64) -> JSONObject {
        record.synced(syncId: syncId)
    }

    /// Stores `record` over `existing` through `changes` (nothing to write when it is unchanged)
    /// and counts the change for `object`.
    public static func save(_ record: JSONObject, over existing: JSONObject?, syncId: Int64, in soup: String, object: String,
                     changes: inout SoupChangeSet, result: inout StageResult) {
        let (entry, change) = make(record, over: existing, syncId: syncId)
        result.add(countKey(change), object: object)
        if change != .unchanged { changes.save(entry, in: soup) }
    }

    /// The count key of a change.
    public static func countKey(_ change: Change) -> String {
        switch change {
        case .created: return StageCounts.created
        case .updated: return StageCounts.updated
        case .unchanged: return StageCounts.unchanged
        }
    }
}
