import JSON

/// What discarding one entry's local change did.
public enum DiscardOutcome: String, Sendable {
    /// Back to the values the org last confirmed, clean.
    case reverted
    /// A never-synced entry (no server id): removed.
    case removed
    /// No confirmed values are known: flags and error cleared, the local values kept.
    case cleared
    /// Not dirty: nothing to discard.
    case clean
    /// A sync up's write of it is journaled and its outcome unknown: left alone until a sync up
    /// settles it (discarding could strand a record the org may hold).
    case pending
    /// No entry has that id.
    case missing
}

extension SoupStore {
    /// Discards the local changes of entries: each goes back to the values the org last confirmed
    /// (a locally deleted one is restored), or is removed when it never reached the org.
    public func discardLocalChanges(ids: [Int64], in soupName: String) async throws -> [Int64: DiscardOutcome] {
        var outcomes: [Int64: DiscardOutcome] = [:]
        var pending = Set<Int64>()
        for sync in try await syncs.all() {
            for entry in try await journal.entries(of: sync.name) where entry.soupName == soupName { pending.insert(entry.entryId) }
        }
        let entries = try await retrieve(ids: ids, from: soupName)
        let confirmed = try await confirmed(ids: ids, in: soupName)
        var restored: [JSONObject] = []
        var removed: [Int64] = []
        for id in ids { outcomes[id] = .missing }
        for entry in entries {
            guard let id = entry.soupEntryId else { continue }
            if !entry.isDirty {
                outcomes[id] = .clean
            } else if pending.contains(id) {
                outcomes[id] = .pending
            } else if entry["Id"]?.stringValue.map({ $0.isEmpty || SyncField.isLocalId($0) }) ?? true {
                removed.append(id)
                outcomes[id] = .removed
            } else {
                var clean = JSONObject()
                for (key, value) in entry where !entry.dataFields.keys.contains(key) { clean[key] = value }
                if let values = confirmed[id] {
                    for (key, value) in values { clean[key] = value }
                    outcomes[id] = .reverted
                } else {
                    for (key, value) in entry.dataFields { clean[key] = value }
                    outcomes[id] = .cleared
                }
                for flag in SyncField.flags { clean[flag] = .bool(false) }
                clean[SyncField.lastError] = nil
                restored.append(clean)
            }
        }
        if !restored.isEmpty { try await upsert(restored, into: soupName) }
        if !removed.isEmpty { _ = try await delete(ids: removed, from: soupName) }
        return outcomes
    }
}
