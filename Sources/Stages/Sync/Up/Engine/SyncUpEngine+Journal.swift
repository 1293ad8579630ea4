import Connectors
import Foundation
import Formats
import JSON
import Logging
import Soups

/// The journal of earlier attempts settled before any page, what stays uncertain held back, and
/// dirty records no tree reaches reported.
extension SyncUpEngine {
    /// Settles the journal of earlier attempts: adopted creates are counted and listed;
    /// what stays uncertain is held back.
    func reconcile(_ tally: inout Tally) async throws -> [String: Set<Int64>] {
        let reconciler = SyncUpJournalReconciler(client: client, store: store, syncName: settings.syncName, mergeMode: settings.mergeMode,
                                                 target: target)
        let settled = try await reconciler.reconcile()
        var success: [SyncUpResultFiles.Row] = []
        for row in settled.rows {
            let key = SyncUpJournalReconciler.EntryKey(soup: row.soup, id: row.entryId)
            if row.kind == .success {
                tally.pending[key] = nil
                tally.result.add(row.operation == "update" ? StageCounts.updated : StageCounts.created, object: row.object)
                success.append(row)
            } else {
                tally.pending[key] = row
            }
        }
        try await files.add(success)
        if settled.adopted > 0 {
            logger.info("\(settled.adopted) record(s) created by an earlier attempt whose answer was lost were found in the org and kept")
        }
        if settled.notApplied > 0 {
            logger.info("\(settled.notApplied) write(s) whose answer was lost were not applied by the org and are sent again")
        }
        if settled.heldCount > 0 {
            logger.warning("\(settled.heldCount) record(s) whose answer was lost could not be settled yet and are not sent in this run")
        }
        return settled.heldBack
    }

    /// Trees holding an uncertain record wait for it: none of their records is sent.
    func holdBack(_ trees: inout [SyncUpTree], _ heldBack: [String: Set<Int64>], tally: inout Tally) {
        guard !heldBack.isEmpty else { return }
        trees.removeAll { tree in
            guard tree.records.contains(where: { heldBack[$0.soup]?.contains($0.entryId) ?? false }) else { return false }
            for record in tree.records where record.isDirty && !(heldBack[record.soup]?.contains(record.entryId) ?? false) {
                let key = SyncUpJournalReconciler.EntryKey(soup: record.soup, id: record.entryId)
                tally.pending[key] = SyncUpResultFiles.Row(
                    kind: .error, object: record.objectType ?? "unknown", operation: record.action == .delete ? "delete" : record.action == .update ? "update" : "create",
                    entryId: record.entryId, localId: record.id.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: record.hasServerId ? record.id : nil,
                    errorCode: SyncUpError.unresolvedReference, errorMessage: "not sent: a record of its tree is uncertain; sent once that is settled",
                    fields: JSONObject(), soup: record.soup)
            }
            return true
        }
    }

    /// Dirty records no tree reaches are failures of the run, not silence.
    func reportStranded(_ stranded: [SyncUpStrandedRecord], tally: inout Tally) async throws {
        guard !stranded.isEmpty else { return }
        var changes = SoupChangeSet()
        var rows: [SyncUpResultFiles.Row] = []
        for item in stranded {
            var entry = item.record.entry
            let error = SyncUpError(status: 0, code: SyncUpError.unresolvedReference, message: item.reason)
            entry[SyncField.lastError] = .string(JSONValue.object(error.json).jsonString)
            changes.save(entry, in: item.record.soup)
            let object = item.record.objectType ?? "unknown"
            tally.result.add(settings.dryRun ? StageCounts.rejected : StageCounts.failed, object: object)
            rows.append(SyncUpResultFiles.Row(
                kind: settings.dryRun ? .plan : .error, object: object, operation: settings.dryRun ? "reject" : "create", entryId: item.record.entryId,
                localId: item.record.id.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: item.record.hasServerId ? item.record.id : nil,
                errorCode: error.code, errorMessage: error.message, fields: JSONObject()))
        }
        if !settings.dryRun { try await store.apply(changes) }
        try await files.add(rows)
        logger.warning("\(stranded.count) dirty record(s) are reached by no tree of this sync and are not sent (see the error CSV)")
    }
}
