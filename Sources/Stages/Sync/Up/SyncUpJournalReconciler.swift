import Connectors
import JSON
import SOQL
import Soups

/// Settles the journal a dead run (or a lost answer) left behind before anything is sent again:
/// a create is looked up in the org (created since it was sent, with the values sent) and adopted
/// when found once, sent again when not found, and held back as uncertain when found more than
/// once; an update whose values the org already holds is marked clean (so LEAVE_IF_CHANGED does
/// not take our own write for a conflict); upserts and deletes are safe to send again.
struct SyncUpJournalReconciler {
    let client: any OrgClient
    let store: SoupStore
    let syncName: String
    let mergeMode: MergeMode

    struct Outcome {
        var changes = SoupChangeSet()
        /// Entries (by soup) still uncertain: not sent in this run.
        var heldBack: [String: Set<Int64>] = [:]
        /// Creates found in the org and adopted.
        var adopted = 0
    }

    func reconcile() async throws -> Outcome {
        var outcome = Outcome()
        let pending = try await store.journal(of: syncName)
        guard !pending.isEmpty else { return outcome }
        for (soup, entries) in Dictionary(grouping: pending, by: \.soupName) {
            let current = Dictionary(try await store.retrieve(ids: entries.map(\.entryId), from: soup).compactMap { entry in
                entry.soupEntryId.map { ($0, entry) }
            }, uniquingKeysWith: { $1 })
            for journal in entries {
                guard var entry = current[journal.entryId], entry.isDirty else {
                    outcome.changes.settledJournalIds.append(journal.id)
                    continue
                }
                switch journal.operation {
                case .upsert, .delete:
                    outcome.changes.settledJournalIds.append(journal.id)
                case .update:
                    if mergeMode == .leaveIfChanged, try await serverHolds(journal), Self.matches(entry, journal.payload) {
                        let fields = try await serverFields(journal, ["LastModifiedDate"])
                        if let date = fields?["LastModifiedDate"] { entry["LastModifiedDate"] = date }
                        entry.markClean()
                        outcome.changes.save(entry, in: soup)
                        outcome.changes.confirmed[soup, default: [:]][journal.entryId] = entry.dataFields
                    }
                    outcome.changes.settledJournalIds.append(journal.id)
                case .create:
                    let found = try await createdRecords(journal)
                    if found.count == 1 {
                        entry["Id"] = .string(found[0])
                        if Self.matches(entry, journal.payload) { entry.markClean() } else {
                            entry[SyncField.locallyCreated] = .bool(false)
                            entry[SyncField.locallyUpdated] = .bool(true)
                        }
                        outcome.changes.save(entry, in: soup)
                        if !entry.isDirty { outcome.changes.confirmed[soup, default: [:]][journal.entryId] = entry.dataFields }
                        outcome.changes.settledJournalIds.append(journal.id)
                        outcome.adopted += 1
                    } else if found.isEmpty {
                        outcome.changes.settledJournalIds.append(journal.id)
                    } else {
                        entry[SyncField.lastError] = .string(JSONValue.object([
                            "errorCode": "UNCERTAIN",
                            "message": .string("a create whose answer was lost matches \(found.count) \(journal.objectType) records created since (\(found.joined(separator: ", "))); not sent again until resolved"),
                        ]).jsonString)
                        outcome.changes.save(entry, in: soup)
                        outcome.heldBack[soup, default: []].insert(journal.entryId)
                    }
                }
            }
        }
        return outcome
    }

    /// `true` when the entry still holds exactly the values that were sent.
    static func matches(_ entry: JSONObject, _ payload: JSONObject) -> Bool {
        payload.allSatisfy { name, value in
            if let text = value.stringValue, text.hasPrefix("@{") { return true }
            return entry[name] == value
        }
    }

    /// Fields a lookup can compare exactly: short text, numbers, booleans.
    private func comparableFields(_ payload: JSONObject) -> [(String, JSONValue)] {
        payload.compactMap { name, value in
            switch value {
            case .string(let text) where !text.hasPrefix("@{") && !text.isEmpty && text.count <= 255: return (name, value)
            case .integer, .bool: return (name, value)
            default: return nil
            }
        }
    }

    private func literal(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return SOQL.quote(text)
        case .bool(let flag): return flag ? "TRUE" : "FALSE"
        default: return value.jsonString
        }
    }

    private func createdRecords(_ journal: SyncJournalEntry) async throws -> [String] {
        let since = ServerTimestamp.soqlLiteral(journal.sentAt - 1000)
        let conditions = ["CreatedDate >= \(since)"] + comparableFields(journal.payload).map { "\($0.0) = \(literal($0.1))" }
        var ids: [String] = []
        for try await record in client.query("SELECT Id FROM \(journal.objectType) WHERE \(conditions.joined(separator: " AND ")) LIMIT 10") {
            if let id = record["Id"]?.stringValue { ids.append(id) }
        }
        return ids
    }

    private func serverFields(_ journal: SyncJournalEntry, _ names: [String]) async throws -> JSONObject? {
        guard let id = journal.recordId else { return nil }
        for try await record in client.query("SELECT \((["Id"] + names).joined(separator: ", ")) FROM \(journal.objectType) WHERE Id = \(SOQL.quote(id))") {
            return record
        }
        return nil
    }

    private func serverHolds(_ journal: SyncJournalEntry) async throws -> Bool {
        let fields = comparableFields(journal.payload)
        guard !fields.isEmpty, let record = try await serverFields(journal, fields.map(\.0)) else { return false }
        return fields.allSatisfy { record[$0.0] == $0.1 }
    }
}
