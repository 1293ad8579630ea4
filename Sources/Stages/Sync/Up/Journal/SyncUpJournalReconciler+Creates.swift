import Connectors
import Foundation
import Soups

/// Lost creates, looked for in the org (``SyncUpCreateFinder``) and decided per entry.
extension SyncUpJournalReconciler.Run {
    /// Looks for lost creates in the org, parents before the children that reference them.
    mutating func findCreates() async throws {
        guard !creates.isEmpty else { return }
        let finder: SyncUpCreateFinder
        do {
            finder = try await SyncUpCreateFinder(client: reconciler.client, store: store, target: target)
        } catch {
            for journal in creates { hold(journal, "the org could not be asked who this run's user is (\(error))") }
            return
        }
        var undecided = creates.sorted { $0.id < $1.id }
        while !undecided.isEmpty {
            let pending = Set(undecided.map { SyncUpJournalReconciler.EntryKey(soup: $0.soupName, id: $0.entryId) })
            var ready: [(journal: SyncJournalEntry, parentId: String?)] = []
            var waiting: [SyncJournalEntry] = []
            var changes = SoupChangeSet()
            for journal in undecided {
                guard let link = journal.link else { ready.append((journal, nil)); continue }
                let parent = SyncUpJournalReconciler.EntryKey(soup: link.soupName, id: link.entryId)
                if let parentId = serverId(parent) {
                    ready.append((journal, parentId))
                } else if pending.contains(parent) {
                    waiting.append(journal)
                } else if outcome.heldBack[parent.soup]?.contains(parent.id) == true {
                    hold(journal, "its parent's create is uncertain (\(link.field)); decided with it")
                } else {
                    // The parent was never created, so the child's reference to it could not resolve.
                    changes.settledJournalIds.append(journal.id)
                    outcome.notApplied += 1
                }
            }
            try await store.apply(changes)
            // The attempts of one entry are decided together: all wait while one waits, and
            // all are held while one is.
            let waitingEntries = Set(waiting.map { SyncUpJournalReconciler.EntryKey(soup: $0.soupName, id: $0.entryId) })
            var decidable: [(journal: SyncJournalEntry, parentId: String?)] = []
            for item in ready {
                let key = SyncUpJournalReconciler.EntryKey(soup: item.journal.soupName, id: item.journal.entryId)
                if waitingEntries.contains(key) {
                    waiting.append(item.journal)
                } else if outcome.heldBack[key.soup]?.contains(key.id) == true {
                    hold(item.journal, "another attempt of its create is undecided")
                } else {
                    decidable.append(item)
                }
            }
            ready = decidable
            if ready.isEmpty {
                for journal in waiting { hold(journal, "its parent's create is undecided") }
                return
            }
            for (_, group) in Dictionary(grouping: ready, by: \.journal.objectType).sorted(by: { $0.key < $1.key }) {
                for batch in finder.batches(group) {
                    let found: [Int64: SyncUpCreateFinder.Match]
                    let askedAt = reconciler.client.clock.now()
                    do {
                        found = try await finder.find(batch)
                    } catch {
                        for (journal, _) in batch { hold(journal, "the org could not be asked whether it holds this record (\(error))") }
                        continue
                    }
                    var batchChanges = SoupChangeSet()
                    // The attempts of one entry (adjacent in a batch) are decided together.
                    var start = batch.startIndex
                    while start < batch.endIndex {
                        let first = batch[start].journal
                        let end = batch[start...].firstIndex { $0.journal.soupName != first.soupName || $0.journal.entryId != first.entryId }
                            ?? batch.endIndex
                        try await decide(batch[start..<end].map(\.journal), found: found, askedAt: askedAt, into: &batchChanges)
                        start = end
                    }
                    try await store.apply(batchChanges)
                }
            }
            undecided = waiting
        }
    }

    /// Decides the journaled attempts of one entry's create (one, or several when it was sent
    /// again) from what the org holds: they are one claimant. One record found is adopted once
    /// no other attempt can still be applied; records found for two attempts mean both were
    /// applied (reported, never guessed); none found settles each attempt whose window has passed.
    mutating func decide(_ attempts: [SyncJournalEntry], found: [Int64: SyncUpCreateFinder.Match], askedAt: Int64,
                         into changes: inout SoupChangeSet) async throws {
        var ids: [String] = []
        for attempt in attempts {
            switch found[attempt.id] ?? .notFound {
            case .one(let id):
                if !ids.contains(id) { ids.append(id) }
            case .several(let many):
                for journal in attempts {
                    hold(journal, "\(many.count) \(journal.objectType) records in the org match it (\(many.joined(separator: ", "))); it is not sent again until one is adopted by hand")
                }
                return
            case .notFound:
                break
            }
        }
        if ids.count > 1 {
            for journal in attempts {
                hold(journal, "\(ids.count) attempts of this create were each applied: the org holds \(ids.joined(separator: ", ")); it is not sent again until one is adopted by hand and the other deleted")
            }
            return
        }
        guard let id = ids.first else {
            for journal in attempts {
                if settled(journal, askedAt: askedAt) {
                    changes.settledJournalIds.append(journal.id)
                    outcome.notApplied += 1
                } else {
                    hold(journal, "not found in the org yet, and the org may still apply it until \(settlesAt(journal)); the next run decides")
                }
            }
            return
        }
        // The record may be any attempt's: another that may still be applied could create a second.
        let open = attempts.count == 1 ? [] : attempts.filter { !settled($0, askedAt: askedAt) }
        guard open.isEmpty else {
            for journal in attempts {
                hold(journal, "found as \(id) in the org, but another attempt of it may still be applied until \(open.map(settlesAt).max() ?? ""); the next run decides")
            }
            return
        }
        let adopted = attempts.first { found[$0.id] == .one(id) } ?? attempts[0]
        try await adopt(adopted, id: id, into: &changes)
        changes.settledJournalIds.append(contentsOf: attempts.map(\.id).filter { $0 != adopted.id })
    }
}
