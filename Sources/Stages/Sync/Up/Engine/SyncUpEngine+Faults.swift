import Connectors
import Foundation
import JSON
import Logging
import Soups

/// What a sync up does when the org does not answer, or refuses for a passing reason: a page goes
/// on without the trees it could not check, keeps unsaved what it cannot date, and sends again
/// after a pause what a row lock refused (the stage stops only through ``SyncUpBreaker``).
extension SyncUpEngine {
    /// The pause before records refused for a passing reason go again: exponential from half a
    /// second, with jitter (a half to the whole of it), so parts and stages that met the same
    /// lock do not all come back at the same moment.
    static func retryPause(afterPass pass: Int) -> Duration {
        let ceiling = 0.5 * Double(1 << min(pass, 5))
        return .milliseconds(Int(1000 * Double.random(in: (ceiling / 2)...ceiling)))
    }

    /// LEAVE_IF_CHANGED: the trees left alone, by position, with the error their dirty records
    /// take — a conflict, or, when the org did not answer the check (every retry timed out or
    /// was refused), a check that could not be made: those trees wait for the next run and the
    /// stage goes on with the next page.
    func treesLeftAlone(_ trees: [SyncUpTree]) async throws -> [Int: SyncUpError] {
        guard settings.mergeMode == .leaveIfChanged else { return [:] }
        do {
            let checker = SyncUpConflictChecker(client: client, target: target)
            // A dry run reports the org's refusals as they come: its checks do not probe.
            let conflicts = settings.dryRun ? try await checker.conflicts(in: trees) : try await breaker.read { try await checker.conflicts(in: trees) }
            return conflicts.mapValues { reason in SyncUpError(status: 409, code: SyncUpError.conflict, message: "left dirty: \(reason) (LEAVE_IF_CHANGED)") }
        } catch {
            // A dry run reports the org's refusals: a check without an answer is none, and fails it.
            guard !settings.dryRun, let noAnswer = SyncUpBreaker.isNoAnswer(error) else { throw error }
            if let tripped = breaker.tripped { throw tripped }
            let failure = SyncUpError(status: 0, code: "CONFLICT_CHECK_FAILED",
                                      message: "not sent: the LEAVE_IF_CHANGED check got no answer (\(noAnswer)); sent by the next run")
            return Dictionary(uniqueKeysWithValues: trees.indices.map { ($0, failure) })
        }
    }

    /// The records of trees whose writes stand but whose new modification dates got no answer
    /// (LEAVE_IF_CHANGED): saved now, the next sync up would take its own writes for server
    /// changes. They are not saved (the rest of the page is); they are uncertain for this run and
    /// the journal settles them before anything is sent again (creates found in the org, updates
    /// confirmed with the org's dates).
    func holdUnsaved(_ keys: [RecordKey], _ ledger: SyncUpPageLedger, because noAnswer: OrgClientError, tally: inout Tally) {
        for key in keys {
            guard let record = ledger.asRead[key] else { continue }
            tally.pending[SyncUpJournalReconciler.EntryKey(soup: record.soup, id: record.entryId)] = SyncUpResultFiles.Row(
                kind: .error, object: record.objectType ?? "unknown", operation: ledger.kinds[key]?.rawValue ?? "delete", entryId: record.entryId,
                localId: record.id.flatMap { SyncField.isLocalId($0) ? $0 : nil }, id: record.hasServerId ? record.id : nil,
                errorCode: SyncUpError.uncertain, errorMessage: "sent, but the org's new modification dates could not be read (\(noAnswer)); settled from the journal before anything is sent again",
                fields: ledger.sent[key] ?? JSONObject(), soup: record.soup)
        }
        logger.warning("sync up \(settings.syncName): the new modification dates of \(keys.count) record(s) got no answer (\(noAnswer)); they are settled from the journal")
    }
}
