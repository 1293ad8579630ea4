import JSON
import Soups

/// One object of a graph sync up, as one pass sends it, each record at most once a run.
struct GraphPass: SingleSoupSyncUpTarget {
    enum Mode {
        /// Dirty records whose references all hold server ids.
        case writes
        /// Locally deleted records.
        case deletes
        /// Records in a true cycle (every reference they wait on is held by a record that waits
        /// too): created without those references, which `deferred` sends once they resolve.
        case breakCycle
        /// Records created without their cycle references, now resolved: one update each.
        case deferred
    }

    let graph: GraphSyncUpTarget
    let object: GraphSyncUpTarget.Object
    let mode: Mode
    let attempts: SyncUpAttempts

    var soupName: String { object.soupName }
    var idFieldName: String { object.idFieldName }
    var modificationDateFieldName: String { object.modificationDateFieldName }
    var externalIdFieldName: String? { object.externalIdFieldName }
    var createFieldlist: [String]? { object.createFieldlist }
    var updateFieldlist: [String]? { object.updateFieldlist }

    /// The graph's references into this soup: where a record created here has its `local_` id
    /// replaced by its server id.
    var references: [SyncUpReference] { graph.references.filter { $0.referencedSoup == soupName } }

    var journalSoups: Set<String>? { [soupName] }

    func idsOfRecordsToSyncUp(in store: SoupStore) async throws -> [Int64] {
        switch mode {
        case .writes, .deletes: return try await ready(in: store)
        case .breakCycle: return try await cycleMembers(in: store)
        case .deferred: return try await resolvedDeferrals(in: store)
        }
    }

    private func ready(in store: SoupStore) async throws -> [Int64] {
        var ready: [Int64] = []
        var localIds: [Int64: String] = [:]
        for entry in try await graph.allDirty(in: soupName, store) {
            guard let id = entry.soupEntryId else { continue }
            let deleted = entry[SyncField.locallyDeleted]?.isTruthy == true
            guard deleted == (mode == .deletes), mode == .deletes || isReady(entry) else { continue }
            ready.append(id)
            if attempts.planning, let local = entry[idFieldName]?.stringValue, SyncField.isLocalId(local) { localIds[id] = local }
        }
        let claimed = attempts.claim(ready, in: soupName)
        if attempts.planning { attempts.plan(localIds: claimed.compactMap { localIds[$0] }) }
        return claimed
    }

    /// This object's records on a true cycle of waits (A waits on B waits on A), if no earlier
    /// object broke one this round. A record waiting, however indirectly, on a record that failed
    /// or that no soup holds is not on a cycle: it stays unresolved.
    private func cycleMembers(in store: SoupStore) async throws -> [Int64] {
        // Every waiting record (dirty, not taken, a `local_` id) and the local ids it waits on.
        var waits: [String: [String]] = [:]
        var mine: [String: (id: Int64, fields: [String])] = [:]
        for other in graph.objects {
            for entry in try await graph.allDirty(in: other.soupName, store) where entry[SyncField.locallyDeleted]?.isTruthy != true {
                guard let id = entry.soupEntryId, !attempts.isTaken(id, in: other.soupName),
                      let local = entry[other.idFieldName]?.stringValue, SyncField.isLocalId(local) else { continue }
                let blocking = Self.localReferences(entry, other)
                waits[local] = blocking.map(\.local)
                if other.soupName == soupName && !blocking.isEmpty { mine[local] = (id, blocking.map(\.field)) }
            }
        }
        // Records that wait on something outside the waiting set (failed, missing) never resolve.
        var doomed = Set(waits.filter { $0.value.contains { waits[$0] == nil } }.keys)
        var grew = true
        while grew {
            grew = false
            for (local, targets) in waits where !doomed.contains(local) && targets.contains(where: doomed.contains) {
                doomed.insert(local)
                grew = true
            }
        }
        // Peel the records nothing waits on: what remains is on (or between) cycles.
        var alive = Set(waits.keys).subtracting(doomed)
        var waitedOn: [String: Int] = [:]
        for local in alive { for target in waits[local] ?? [] where alive.contains(target) { waitedOn[target, default: 0] += 1 } }
        var free = alive.filter { (waitedOn[$0] ?? 0) == 0 }
        while let local = free.popFirst() {
            alive.remove(local)
            for target in waits[local] ?? [] where alive.contains(target) {
                waitedOn[target, default: 0] -= 1
                if waitedOn[target] == 0 { free.insert(target) }
            }
        }
        let members = mine.filter { alive.contains($0.key) }.map(\.value)
        guard !members.isEmpty, attempts.claimCycleBreak() else { return [] }
        let claimed = attempts.claim(members.map(\.id), in: soupName)
        for member in members where claimed.contains(member.id) { attempts.deferFields(member.fields, of: member.id, in: soupName) }
        if attempts.planning { attempts.plan(localIds: mine.filter { claimed.contains($0.value.id) }.map(\.key)) }
        return claimed
    }

    /// Records created without their cycle references whose references now hold server ids (in
    /// a dry run: name planned records), flagged updated so the deferred fields are sent.
    private func resolvedDeferrals(in store: SoupStore) async throws -> [Int64] {
        let pending = attempts.pendingDeferrals(in: soupName)
        guard !pending.isEmpty else { return [] }
        var changes = SoupChangeSet()
        var ready: [Int64] = []
        for var entry in try await store.retrieve(ids: pending.keys.sorted(), from: soupName) {
            guard let id = entry.soupEntryId, let fields = pending[id],
                  fields.allSatisfy({ field in
                      entry[field]?.stringValue.map { !SyncField.isLocalId($0) || attempts.planning && attempts.isPlanned($0) } ?? true
                  }) else { continue }
            entry[SyncField.local] = true
            entry[SyncField.locallyUpdated] = true
            changes.save(entry, in: soupName)
            ready.append(id)
        }
        let claimed = attempts.claimDeferred(ready, in: soupName)
        try await store.apply(changes)
        return claimed
    }

    /// Every reference holds a server id — or, in a dry run, names a record already planned.
    private func isReady(_ entry: JSONObject) -> Bool {
        Self.localReferences(entry, object).allSatisfy { attempts.planning && attempts.isPlanned($0.local) }
    }

    func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
        let deferred = mode == .breakCycle || mode == .deferred ? attempts.deferredFields(in: soupName) : [:]
        return try await store.retrieve(ids: ids, from: soupName).map { entry in
            var record = Self.record(entry, object)
            if let fields = entry.soupEntryId.flatMap({ deferred[$0] }) {
                if mode == .breakCycle {
                    // Created without the cycle's references; everything else as usual.
                    let base = object.createFieldlist ?? entry.dataFields.keys.filter { !Self.nested(entry[$0]) }
                    record.createFields = base.filter { !fields.contains($0) }
                } else {
                    record.updateFields = fields
                }
            }
            return SyncUpTree(parent: record)
        }
    }

    private static func nested(_ value: JSONValue?) -> Bool {
        if case .object? = value { return true }
        if case .array? = value { return true }
        return false
    }

    /// The references of `entry` that still hold a `local_` id.
    static func localReferences(_ entry: JSONObject, _ object: GraphSyncUpTarget.Object) -> [(field: String, local: String)] {
        object.references.compactMap { reference in
            entry[reference.field]?.stringValue.flatMap { SyncField.isLocalId($0) ? (reference.field, $0) : nil }
        }
    }

    static func record(_ entry: JSONObject, _ object: GraphSyncUpTarget.Object) -> SyncUpRecord {
        SyncUpRecord(soup: object.soupName, entry: entry, objectType: object.sobjectType, idField: object.idFieldName,
                     modificationDateField: object.modificationDateFieldName, externalIdField: object.externalIdFieldName,
                     createFields: object.createFieldlist, updateFields: object.updateFieldlist)
    }
}
