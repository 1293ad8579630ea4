import JSON
import Soups

/// One object of a graph sync up, as one pass sends it: its dirty records whose references all
/// hold server ids (or, with `deletes`, its locally deleted records), each at most once a run.
struct GraphPass: SingleSoupSyncUpTarget {
    let graph: GraphSyncUpTarget
    let object: GraphSyncUpTarget.Object
    let deletes: Bool
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
        var ready: [Int64] = []
        var localIds: [Int64: String] = [:]
        var afterId: Int64 = 0
        while true {
            let page = try await store.dirtyEntries(in: soupName, afterId: afterId, limit: 2000)
            guard let last = page.last?.soupEntryId else { break }
            afterId = last
            for entry in page {
                guard let id = entry.soupEntryId else { continue }
                let deleted = entry[SyncField.locallyDeleted]?.isTruthy == true
                guard deleted == deletes, deletes || isReady(entry) else { continue }
                ready.append(id)
                if attempts.planning, let local = entry[idFieldName]?.stringValue, SyncField.isLocalId(local) { localIds[id] = local }
            }
        }
        let claimed = attempts.claim(ready, in: soupName)
        if attempts.planning { attempts.plan(localIds: claimed.compactMap { localIds[$0] }) }
        return claimed
    }

    /// Every reference holds a server id — or, in a dry run, names a record already planned.
    private func isReady(_ entry: JSONObject) -> Bool {
        Self.localReferences(entry, object).allSatisfy { attempts.planning && attempts.isPlanned($0.local) }
    }

    func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
        try await store.retrieve(ids: ids, from: soupName).map { SyncUpTree(parent: Self.record($0, object)) }
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
