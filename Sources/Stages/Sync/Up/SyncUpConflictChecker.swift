import Connectors
import Formats
import JSON
import SOQL

/// LEAVE_IF_CHANGED's check, batched: reads the server's modification dates of every record of a
/// page of trees in a few requests (parents with their children in one subquery, 200 trees a
/// query; single records through sObject Collections retrieves, every object's in one request for
/// up to 10,000 ids) and finds the trees where a server record is gone, or the target says the
/// local copy is not newer than it (``SyncUpTarget/isNewerThanServer(_:serverModificationDate:)``).
struct SyncUpConflictChecker {
    let client: any OrgClient
    let target: any SyncUpTarget

    /// Conflicts by position keyed instead by each tree's root entry id, for the same trees
    /// loaded again or taken apart (``SyncUpEngine/syncPage`` reads them back by root).
    static func byRoot(_ conflicts: [Int: String], in trees: [SyncUpTree]) -> [Int64: String] {
        Dictionary(uniqueKeysWithValues: conflicts.map { (trees[$0.key].parent.entryId, $0.value) })
    }

    /// The trees that must be left alone, by position, with the reason.
    func conflicts(in trees: [SyncUpTree]) async throws -> [Int: String] {
        var remote: [String: Int64?] = [:]
        var flatIds: [String: (field: String, ids: [String])] = [:]
        var treeIds: [String: (parent: SyncUpRecord, relationship: String, childField: String, ids: [String])] = [:]
        for tree in trees where tree.isDirty {
            if tree.parent.hasServerId, let relationship = tree.childRelationshipName, let type = tree.parent.objectType {
                let childField = tree.children.first?.modificationDateField ?? "LastModifiedDate"
                treeIds[type, default: (tree.parent, relationship, childField, [])].ids.append(tree.parent.id ?? "")
            } else {
                for record in tree.records where record.hasServerId {
                    guard let type = record.objectType else { continue }
                    flatIds[type, default: (record.modificationDateField, [])].ids.append(record.id ?? "")
                }
            }
        }
        for (type, records) in try await client.existingRecords(flatIds.mapValues { ($0.ids, [$0.field]) }) {
            let field = flatIds[type]?.field ?? "LastModifiedDate"
            for (key, record) in records { remote[key] = ServerTimestamp.milliseconds(record[field]) }
        }
        for (type, group) in treeIds {
            let parentField = group.parent.modificationDateField
            for chunk in group.ids.chunked(into: 200) {
                var query = try SOQLQuery(selecting: ["Id", parentField], from: type)
                query.select.append(.subquery(try SOQLQuery(selecting: ["Id", group.childField], from: group.relationship)))
                query.addFilter(try .isIn("Id", chunk))
                for try await record in client.query(query) {
                    remote[SalesforceId.key(record["Id"])] = ServerTimestamp.milliseconds(record[parentField])
                    for child in record[group.relationship]?["records"]?.arrayValue ?? [] {
                        remote[SalesforceId.key(child["Id"])] = ServerTimestamp.milliseconds(child[group.childField])
                    }
                }
            }
        }
        var conflicts: [Int: String] = [:]
        for (index, tree) in trees.enumerated() where tree.isDirty {
            let parentGone = tree.parent.isLocallyDeleted && tree.relationship == .masterDetail
            for (position, record) in tree.records.enumerated() where record.hasServerId {
                let locallyDeleted = record.isLocallyDeleted || (position > 0 && parentGone)
                guard let found = remote[SalesforceId.key(record.entry[record.idField])] else {
                    if locallyDeleted { continue }
                    conflicts[index] = "\(record.objectType ?? "record") \(record.id ?? "") was deleted on the server"
                    break
                }
                if !target.isNewerThanServer(record, serverModificationDate: found) {
                    let local = ServerTimestamp.milliseconds(record.entry[record.modificationDateField])
                    conflicts[index] = "\(record.objectType ?? "record") \(record.id ?? "") changed on the server"
                        + (found.map { " at \(ServerTimestamp.soqlLiteral($0))" } ?? "")
                        + (local.map { ", after the local copy of \(ServerTimestamp.soqlLiteral($0))" } ?? "")
                    break
                }
            }
        }
        return conflicts
    }
}
