import JSON
import Testing

@testable import Stages

/// A sync up's tally across pages and the parts of a page: a record left pending (uncertain)
/// by an earlier round and settled in a later one is counted once, not also as uncertain.
struct SyncUpTallyTests {
    typealias Tally = SyncUpEngine.Tally
    typealias Key = SyncUpJournalReconciler.EntryKey

    func pendingRow(_ id: Int64) -> SyncUpResultFiles.Row {
        SyncUpResultFiles.Row(kind: .error, object: "Contact", operation: "create", entryId: id, localId: "local_\(id)", id: nil,
                              errorCode: "UNRESOLVED_REFERENCE", errorMessage: "its parent's create is uncertain", fields: JSONObject(),
                              soup: "Contacts")
    }

    @Test func recordsSettledInEitherPartOfAPageLeaveTheRunsPendingRows() {
        var run = Tally()
        for id: Int64 in 1...3 { run.pending[Key(soup: "Contacts", id: id)] = pendingRow(id) }
        var page = Tally()
        var first = Tally()
        var second = Tally()
        first.settle(Key(soup: "Contacts", id: 1))
        first.result.add(StageCounts.created, object: "Contact")
        second.settle(Key(soup: "Contacts", id: 2))
        second.result.add(StageCounts.created, object: "Contact")
        page.absorb(first)
        page.absorb(second)
        run.merge(page)
        #expect(Set(run.pending.keys) == [Key(soup: "Contacts", id: 3)], "only the record no part settled stays pending")
        let rows = run.close()
        #expect(rows.map(\.entryId) == [3])
        #expect(run.result.byObject["Contact"]?[StageCounts.created] == 2)
        #expect(run.result.byObject["Contact"]?[StageCounts.uncertain] == 1)
    }
}
