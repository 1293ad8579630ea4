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
        var afterId: Int64 = 0
        while true {
            let page = try await store.dirtyEntries(in: soupName, afterId: afterId, limit: 2000)
            guard let last = page.last?.soupEntryId else { break }
            afterId = last
            for entry in page {
                guard let id = entry.soupEntryId else { continue }
                let deleted = entry[SyncField.locallyDeleted]?.isTruthy == true
                guard deleted == deletes, deletes || Self.unresolved(entry, object) == nil else { continue }
                ready.append(id)
            }
        }
        return attempts.claim(ready, in: soupName)
    }

    func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
        try await store.retrieve(ids: ids, from: soupName).map { SyncUpTree(parent: Self.record($0, object)) }
    }

    /// The first reference of `entry` that still holds a `local_` id, if any.
    static func unresolved(_ entry: JSONObject, _ object: GraphSyncUpTarget.Object) -> (field: String, local: String)? {
        for reference in object.references {
            if let value = entry[reference.field]?.stringValue, SyncField.isLocalId(value) { return (reference.field, value) }
        }
        return nil
    }

    static func record(_ entry: JSONObject, _ object: GraphSyncUpTarget.Object) -> SyncUpRecord {
        SyncUpRecord(soup: object.soupName, entry: entry, objectType: object.sobjectType, idField: object.idFieldName,
                     modificationDateField: object.modificationDateFieldName, externalIdField: object.externalIdFieldName,
                     createFields: object.createFieldlist, updateFields: object.updateFieldlist)
    }
}
