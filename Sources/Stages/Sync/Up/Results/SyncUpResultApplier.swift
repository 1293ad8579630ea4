import JSON
import Soups

/// Applies the org's answers to a page of trees with Mobile Sync's rules, fixing its known
/// weaknesses: a created parent's new id reaches every child (those that failed too); a lookup
/// parent's delete clears its children's parent field; a record deleted on the server is re-created
/// at most once per run (OVERWRITE) or left as a conflict (LEAVE_IF_CHANGED); nothing is marked
/// clean unless the org confirmed it.
struct SyncUpResultApplier {
    let mergeMode: MergeMode

    /// What one pass decided beyond the trees' new state.
    struct PassResult {
        /// Trees to send again because OVERWRITE met records deleted on the server.
        var rerun: Set<Int> = []
        /// Trees where a child's update met a missing record: the parent may be gone too.
        var parentsToCheck: Set<Int> = []
    }

    /// Applies `outcomes` to `trees`; records removed locally go to `removed`, and each record's
    /// final outcome to `final`.
    func apply(_ outcomes: [RecordKey: SyncUpOutcome], kinds: [RecordKey: SyncUpOperation.Kind], to trees: inout [SyncUpTree],
               removed: inout Set<RecordKey>, final: inout [RecordKey: SyncUpOutcome], allowRerun: Bool) -> PassResult {
        var result = PassResult()
        // Tree by tree, each parent before its children; trees are changed in place (a copy
        // would copy every entry it touches).
        for (key, outcome) in outcomes.sorted(by: { ($0.key.tree, $0.key.child ?? -1) < ($1.key.tree, $1.key.child ?? -1) }) {
            if let position = key.child {
                guard !removed.contains(key) else { continue }
                final[key] = outcome
                applyToChild(outcome, kind: kinds[key], position: position, tree: &trees[key.tree], index: key.tree, removed: &removed,
                             final: &final, allowRerun: allowRerun, result: &result)
            } else {
                final[key] = outcome
                applyToParent(outcome, kind: kinds[key], tree: &trees[key.tree], index: key.tree, removed: &removed, final: &final,
                              allowRerun: allowRerun, result: &result)
            }
        }
        return result
    }

    private func applyToParent(_ outcome: SyncUpOutcome, kind: SyncUpOperation.Kind?, tree: inout SyncUpTree, index: Int,
                               removed: inout Set<RecordKey>, final: inout [RecordKey: SyncUpOutcome], allowRerun: Bool,
                               result: inout PassResult) {
        let key = RecordKey(tree: index, child: nil)
        if kind == .delete || kind == nil {
            if case .discarded = outcome {} else if !(outcome.isSuccess || outcome.error?.recordMissing == true) {
                record(outcome, on: &tree.parent)
                return
            }
            removed.insert(key)
            final[key] = outcome.error == nil ? outcome : .succeeded(id: tree.parent.id)
            tree.parent.entry.markClean()
            tree.parentRemoved = true
            for position in tree.children.indices {
                let childKey = RecordKey(tree: index, child: position)
                if tree.relationship == .masterDetail {
                    removed.insert(childKey)
                    tree.children[position].entry.markClean()
                } else if let field = tree.parentIdField {
                    tree.children[position].entry[field] = .null
                }
            }
            return
        }
        switch outcome {
        case .succeeded(let id), .matched(let id):
            if let id, kind == .create || kind == .upsert { relink(&tree, to: id) }
            tree.parent.entry.markClean()
        case .failed(let error) where error.recordMissing && kind == .update:
            if mergeMode == .overwrite && allowRerun {
                recreateParent(&tree)
                result.rerun.insert(index)
            } else {
                final[key] = .failed(conflictError(error, mergeMode: mergeMode))
                record(final[key]!, on: &tree.parent)
            }
        default:
            record(outcome, on: &tree.parent)
        }
    }

    private func applyToChild(_ outcome: SyncUpOutcome, kind: SyncUpOperation.Kind?, position: Int, tree: inout SyncUpTree, index: Int,
                              removed: inout Set<RecordKey>, final: inout [RecordKey: SyncUpOutcome], allowRerun: Bool,
                              result: inout PassResult) {
        let key = RecordKey(tree: index, child: position)
        if kind == .delete || kind == nil {
            if case .discarded = outcome {} else if !(outcome.isSuccess || outcome.error?.recordMissing == true) {
                record(outcome, on: &tree.children[position])
                return
            }
            removed.insert(key)
            final[key] = outcome.error == nil ? outcome : .succeeded(id: tree.children[position].id)
            tree.children[position].entry.markClean()
            return
        }
        switch outcome {
        case .succeeded(let id), .matched(let id):
            if let id { tree.children[position].id = id }
            tree.children[position].entry.markClean()
        case .failed(let error) where tree.parentIdField.map(error.referenceMissing) == true:
            if tree.parentRemoved, let field = tree.parentIdField, allowRerun {
                // The parent's delete went first: the child is sent again without the link.
                tree.children[position].entry[field] = .null
                result.rerun.insert(index)
            } else if mergeMode == .overwrite && allowRerun {
                recreateParent(&tree)
                result.rerun.insert(index)
            } else {
                final[key] = .failed(conflictError(error, mergeMode: mergeMode))
                record(final[key]!, on: &tree.children[position])
            }
        case .failed(let error) where error.recordMissing && kind == .update:
            if mergeMode == .overwrite && allowRerun {
                tree.children[position].flagForRecreation()
                result.rerun.insert(index)
                result.parentsToCheck.insert(index)
            } else {
                final[key] = .failed(conflictError(error, mergeMode: mergeMode))
                record(final[key]!, on: &tree.children[position])
            }
        default:
            record(outcome, on: &tree.children[position])
        }
    }

    /// Gives the parent its new server id and every child the new parent id.
    private func relink(_ tree: inout SyncUpTree, to id: String) {
        tree.parent.id = id
        guard let field = tree.parentIdField else { return }
        for position in tree.children.indices { tree.children[position].entry[field] = .string(id) }
    }

    /// OVERWRITE met a parent deleted on the server: it is sent again as new, with its children
    /// (master-detail children were deleted with it and are re-created; lookup children re-parented).
    func recreateParent(_ tree: inout SyncUpTree) {
        tree.parent.flagForRecreation()
        guard let field = tree.parentIdField else { return }
        for position in tree.children.indices {
            tree.children[position].entry[field] = tree.parent.entry[tree.parent.idField]
            if tree.relationship == .masterDetail {
                tree.children[position].flagForRecreation()
            } else {
                tree.children[position].entry[SyncField.local] = .bool(true)
                tree.children[position].entry[SyncField.locallyUpdated] = .bool(true)
            }
        }
    }

    /// Keeps the flags and stores the error as `__last_error__` (the org's error JSON).
    private func record(_ outcome: SyncUpOutcome, on record: inout SyncUpRecord) {
        switch outcome {
        case .failed(let error): record.entry[SyncField.lastError] = .string(JSONValue.object(error.json).jsonString)
        case .uncertain(let message):
            record.entry[SyncField.lastError] = .string(JSONValue.object([
                "errorCode": .string(SyncUpError.uncertain), "message": .string("the org's answer was lost (\(message)); reconciled before the next send"),
            ]).jsonString)
        case .unresolved(let message):
            record.entry[SyncField.lastError] = .string(JSONValue.object([
                "errorCode": .string(SyncUpError.unresolvedReference), "message": .string("not sent: \(message)"),
            ]).jsonString)
        default: break
        }
    }

    private func conflictError(_ error: SyncUpError, mergeMode: MergeMode) -> SyncUpError {
        let message = mergeMode == .overwrite
            ? "deleted on the server again after being re-created in this run; not re-created twice"
            : "deleted on the server; left unchanged (LEAVE_IF_CHANGED)"
        return SyncUpError(status: error.status, code: mergeMode == .overwrite ? error.code : SyncUpError.conflict, message: message, fields: error.fields)
    }
}
