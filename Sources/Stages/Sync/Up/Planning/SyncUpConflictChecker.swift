import Connectors
import Formats
import JSON
import SOQL
import Soups

/// LEAVE_IF_CHANGED's check, batched: reads the server's modification dates of every record of a
/// page of trees in a few requests (parents with their children in one subquery, 200 trees a
/// query; single records through sObject Collections retrieves, every object's in one request for
/// up to 10,000 ids) and finds the trees where a server record is gone, or the target says the
/// local copy is not newer than it (``SyncUpTarget/isNewerThanServer(_:serverModificationDate:)``).
/// A local copy held as created (``SyncField/asCreated``) is dated by the org's `CreatedDate`,
/// read in the same requests.
struct SyncUpConflictChecker {
    let client: any OrgClient
    let target: any SyncUpTarget

    /// Conflicts by position keyed instead by each tree's root entry id, for the same trees
    /// loaded again or taken apart (``SyncUpEngine/syncPage`` reads them back by root).
    static func byRoot<Reason>(_ conflicts: [Int: Reason], in trees: [SyncUpTree]) -> [Int64: Reason] {
        Dictionary(uniqueKeysWithValues: conflicts.map { (trees[$0.key].parent.entryId, $0.value) })
    }

    /// The trees that must be left alone, by position, with the reason.
    func conflicts(in trees: [SyncUpTree]) async throws -> [Int: String] {
        var remote: [String: Int64?] = [:]
        // The org's `CreatedDate` of records held as created.
        var created: [String: JSONValue] = [:]
        var flatIds: [String: (field: String, ids: [String], asCreated: Bool)] = [:]
        var treeIds: [String: (parent: SyncUpRecord, relationship: String, childField: String, ids: [String], asCreated: Bool)] = [:]
        func asCreated(_ record: SyncUpRecord) -> Bool {
            SyncUpDateReads.markedAsCreated(field: record.modificationDateField) && record.entry.isAsCreated(dateField: record.modificationDateField)
        }
        for tree in trees where tree.isDirty {
            if tree.parent.hasServerId, let relationship = tree.childRelationshipName, let type = tree.parent.objectType {
                let childField = tree.children.first?.modificationDateField ?? "LastModifiedDate"
                treeIds[type, default: (tree.parent, relationship, childField, [], false)].ids.append(tree.parent.id ?? "")
                if tree.records.contains(where: asCreated) { treeIds[type]?.asCreated = true }
            } else {
                for record in tree.records where record.hasServerId {
                    guard let type = record.objectType else { continue }
                    flatIds[type, default: (record.modificationDateField, [], false)].ids.append(record.id ?? "")
                    if asCreated(record) { flatIds[type]?.asCreated = true }
                }
            }
        }
        /// A record's fields to read: its date, and `CreatedDate` where a record is held as created.
        func fields(_ field: String, _ asCreated: Bool) -> [String] {
            asCreated && field != Self.createdDate ? [field, Self.createdDate] : [field]
        }
        func note(_ record: JSONObject, _ field: String, key: String? = nil) {
            let key = key ?? SalesforceId.key(record["Id"])
            remote[key] = ServerTimestamp.milliseconds(record[field])
            if let date = record[Self.createdDate] { created[key] = date }
        }
        for (type, records) in try await client.existingRecords(flatIds.mapValues { ($0.ids, fields($0.field, $0.asCreated)) }) {
            let field = flatIds[type]?.field ?? "LastModifiedDate"
            for (key, record) in records { note(record, field, key: key) }
        }
        for (type, group) in treeIds {
            let parentField = group.parent.modificationDateField
            for chunk in group.ids.chunked(into: 200) {
                var query = try SOQLQuery(selecting: ["Id"] + fields(parentField, group.asCreated), from: type)
                query.select.append(.subquery(try SOQLQuery(selecting: ["Id"] + fields(group.childField, group.asCreated), from: group.relationship)))
                query.addFilter(try .isIn("Id", chunk))
                for try await record in client.query(query) {
                    note(record, parentField)
                    for case let child? in (record[group.relationship]?["records"]?.arrayValue ?? []).map(\.objectValue) {
                        note(child, group.childField)
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
                // A copy held as created is as old as the org's record was when created.
                var dated = record
                let heldAsCreated = asCreated(record)
                if heldAsCreated {
                    guard let date = created[SalesforceId.key(record.entry[record.idField])] else {
                        conflicts[index] = "\(record.objectType ?? "record") \(record.id ?? "") is held as created, but the org gave no CreatedDate to compare"
                        break
                    }
                    dated.entry[record.modificationDateField] = date
                }
                if !target.isNewerThanServer(dated, serverModificationDate: found) {
                    let local = ServerTimestamp.milliseconds(dated.entry[record.modificationDateField])
                    conflicts[index] = "\(record.objectType ?? "record") \(record.id ?? "") changed on the server"
                        + (found.map { " at \(ServerTimestamp.soqlLiteral($0))" } ?? "")
                        + (local.map { ", after the local copy of \(ServerTimestamp.soqlLiteral($0))\(heldAsCreated ? " (as created)" : "")" } ?? "")
                    break
                }
            }
        }
        return conflicts
    }

    private static let createdDate = "CreatedDate"
}
