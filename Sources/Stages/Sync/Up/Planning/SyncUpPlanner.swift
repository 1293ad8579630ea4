import JSON
import Soups

/// Turns trees into the writes to send, with Mobile Sync's rules: parent first (its delete last),
/// then every dirty child; children of a parent created in this sync all follow it (linked to its
/// new id); master-detail children of a deleted parent are left to the server's cascade.
struct SyncUpPlanner {
    /// Whether the writes carry their fields. Without them a plan is the writes' shape (which
    /// records, what kind, which object; a child of a parent in the org still names its id):
    /// what packing them into requests needs, as where to cut a page does — no payload built.
    var payloads = true

    /// The writes of a tree, and the records settled without a request.
    struct TreePlan {
        var operations: [SyncUpOperation] = []
        var settled: [RecordKey: SyncUpOutcome] = [:]
    }

    func plan(_ tree: inout SyncUpTree, index: Int) -> TreePlan {
        var plan = TreePlan()
        plan.operations.reserveCapacity(tree.children.count + 1)
        let parentKey = RecordKey(tree: index, child: nil)
        var parentAction = tree.parent.action
        var parentDelete: SyncUpOperation?
        if parentAction != .none && parentAction != .discard && tree.parent.objectType == nil {
            plan.settled[parentKey] = .failed(Self.missingType)
            parentAction = .none
        }
        switch parentAction {
        case .none: break
        case .discard: plan.settled[parentKey] = .discarded
        case .delete: parentDelete = operation(for: tree.parent, action: .delete, key: parentKey)
        case .create, .update: plan.operations.append(operation(for: tree.parent, action: parentAction, key: parentKey))
        }
        let parentIsNew = parentAction == .create
        guard let parentIdField = tree.parentIdField else {
            if let parentDelete { plan.operations.append(parentDelete) }
            return plan
        }
        for position in tree.children.indices {
            let key = RecordKey(tree: index, child: position)
            if tree.relationship == .masterDetail && (parentAction == .delete || parentAction == .discard) {
                // The server's cascade (or the local discard) removes these children.
                if parentAction == .discard { plan.settled[key] = .discarded }
                continue
            }
            if parentAction == .discard { tree.children[position].entry[parentIdField] = .null }
            var child = tree.children[position]
            var action = child.action
            if parentIsNew && action == .none { action = child.hasServerId ? .update : .create }
            if action == .none { continue }
            if action == .discard { plan.settled[key] = .discarded; continue }
            if child.objectType == nil { plan.settled[key] = .failed(Self.missingType); continue }
            var write = operation(for: child, action: action, key: key)
            if action != .delete && parentAction != .delete {
                if parentIsNew {
                    write.parentLink = (parentIdField, parentKey)
                    write.fields[parentIdField] = nil
                } else if !tree.parentRemoved, tree.parent.hasServerId, let parentId = tree.parent.id {
                    // Only a parent the org holds: a discarded one's `local_` id must not leave.
                    write.fields[parentIdField] = .string(parentId)
                    child.entry[parentIdField] = .string(parentId)
                }
            }
            tree.children[position] = child
            plan.operations.append(write)
        }
        if let parentDelete { plan.operations.append(parentDelete) }
        return plan
    }

    private func operation(for record: SyncUpRecord, action: SyncUpRecord.Action, key: RecordKey) -> SyncUpOperation {
        let type = record.objectType ?? ""
        switch action {
        case .delete:
            return SyncUpOperation(key: key, kind: .delete, objectType: type, soup: record.soup, entryId: record.entryId,
                                   recordId: record.id, fields: JSONObject())
        case .update:
            return SyncUpOperation(key: key, kind: .update, objectType: type, soup: record.soup, entryId: record.entryId,
                                   recordId: record.id, fields: payloads ? record.payload(for: .update) : JSONObject())
        default:
            var fields = payloads ? record.payload(for: .create) : JSONObject()
            if let field = record.externalIdField, let value = record.externalIdValue {
                fields[field] = nil
                return SyncUpOperation(key: key, kind: .upsert, objectType: type, soup: record.soup, entryId: record.entryId,
                                       externalIdField: field, externalIdValue: value, fields: fields)
            }
            return SyncUpOperation(key: key, kind: .create, objectType: type, soup: record.soup, entryId: record.entryId, fields: fields)
        }
    }

    static let missingType = SyncUpError(
        status: 400, code: "INVALID_TYPE", message: "the record has no attributes.type, so its sObject type is unknown")
}
