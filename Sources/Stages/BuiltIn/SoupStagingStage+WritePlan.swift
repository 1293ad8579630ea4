import Foundation
import JSON
import Soups

/// What a `stage` batch writes, and the entries the stage flagged itself.
extension SoupStagingStage {
    /// What a batch will write: the entries to store, and per record where its entry will be.
    struct WritePlan {
        /// Per record: its entry's index in `toStore`, the unchanged entry, or nothing.
        enum Slot { case stored(Int), unchanged(JSONObject), none }
        var toStore: [JSONObject] = []
        var positions: [Slot] = []
        /// Entries of `toStore` staged from records the org returned (they carry `attributes.url`)
        /// and left clean: what the org holds, recorded as confirmed in the same write, so a
        /// `markDirty as: auto` leaves them clean.
        var confirming: Set<Int> = []
        /// The same for entries such records left unchanged, by `_soupEntryId`.
        var confirmingUnchanged: [Int64: JSONObject] = [:]
        /// Entries of `toStore` the batch flagged (`markDirty`).
        var flagged: [Int] = []

        /// The entries' JSON and index values, computed before the write is queued.
        func prepare(in soupName: String, context: StageContext) async throws -> PreparedEntries {
            try await context.store.prepare(toStore, for: soupName, confirmingAt: confirming)
        }

        /// Queues the write on the store's writer: the entries, and the confirmed values of those
        /// left unchanged, in one transaction; `keys` are the batch's match keys.
        func queue(_ prepared: PreparedEntries, keys: Set<JSONValue> = [], context: StageContext) -> QueuedWrite {
            QueuedWrite(write: context.store.startUpsert(prepared, confirming: confirmingUnchanged), keys: keys, flagged: flagged)
        }
    }

    /// A batch's write queued on the store's writer and not yet known to be committed.
    struct QueuedWrite {
        var write: PendingUpsert
        var keys: Set<JSONValue>
        var flagged: [Int]
    }

    /// The entries this run of the stage flagged itself, kept with `markDirty` and LEAVE_IF_CHANGED
    /// only: a later record for one of them (a key repeated in the input) is merged into it, as
    /// without flags, not counted as a conflict with a local change.
    struct FlaggedEntries {
        let tracking: Bool
        private var ids: [String: Set<Int64>] = [:]

        init(tracking: Bool) { self.tracking = tracking }

        func contains(_ id: Int64?, in soupName: String) -> Bool {
            guard tracking, let id else { return false }
            return ids[soupName]?.contains(id) ?? false
        }

        /// Notes the entries at `positions` of a write once it is stored.
        mutating func add(_ positions: [Int], of stored: StoredEntries, in soupName: String) {
            guard tracking, !positions.isEmpty else { return }
            ids[soupName, default: []].formUnion(positions.map { stored.ids[$0] })
        }

        /// Waits for a queued write to commit, noting the entries it flagged.
        mutating func settle(_ queued: QueuedWrite, in soupName: String) async throws {
            add(queued.flagged, of: try await queued.write.value(), in: soupName)
        }
    }
}
