import Foundation
import JSON
import Testing

@testable import Soups

/// `discardLocalChanges`: back to what the org confirmed, or gone if it never reached the org.
@Suite struct DiscardTests {
    @Test func eachKindOfLocalChangeIsDiscardedItsOwnWay() async throws {
        try await withStore { store in
            try await store.registerSoup(SoupSpec(name: "S", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: SyncField.local, type: .string)]))
            let saved = try await store.upsert([
                entry(["Id": "001A", "Name": "Edited", "__local__": true, "__locally_updated__": true, "__last_error__": "{\"errorCode\":\"X\"}"]),
                entry(["Id": "local_1", "Name": "New", "__local__": true, "__locally_created__": true]),
                entry(["Id": "001B", "Name": "Deleted", "__local__": true, "__locally_deleted__": true]),
                entry(["Id": "001C", "Name": "Never confirmed", "__local__": true, "__locally_updated__": true]),
                entry(["Id": "001D", "Name": "Clean", "__local__": false]),
                entry(["Id": "local_2", "Name": "Uncertain", "__local__": true, "__locally_created__": true]),
            ], into: "S")
            let ids = saved.compactMap(\.soupEntryId)
            try await store.setConfirmed([ids[0]: entry(["Id": "001A", "Name": "Original"]), ids[2]: entry(["Id": "001B", "Name": "Deleted"])], in: "S")
            _ = try await store.syncs.create(SyncState(name: "up", type: .syncUp, soupName: "S", target: [:], options: [:]))
            _ = try await store.journal.append([SyncJournalEntry(syncName: "up", soupName: "S", entryId: ids[5], operation: .create,
                                                                  objectType: "Account", recordId: nil, payload: ["Name": "Uncertain"], sentAt: 0)])

            let outcomes = try await store.discardLocalChanges(ids: ids + [999], in: "S")
            #expect(outcomes[ids[0]] == .reverted)
            #expect(outcomes[ids[1]] == .removed)
            #expect(outcomes[ids[2]] == .reverted)
            #expect(outcomes[ids[3]] == .cleared)
            #expect(outcomes[ids[4]] == .clean)
            #expect(outcomes[ids[5]] == .pending, "a write whose outcome is unknown is not discarded")
            #expect(outcomes[999] == .missing)

            let after = Dictionary(uniqueKeysWithValues: try await store.retrieve(ids: ids, from: "S").map { ($0.soupEntryId!, $0) })
            #expect(after[ids[0]]?["Name"] == "Original")
            #expect(after[ids[0]]?.isDirty == false && after[ids[0]]?[SyncField.lastError] == nil)
            #expect(after[ids[1]] == nil)
            #expect(after[ids[2]]?[SyncField.locallyDeleted] == false && after[ids[2]]?.isDirty == false)
            #expect(after[ids[3]]?["Name"] == "Never confirmed" && after[ids[3]]?.isDirty == false)
            #expect(after[ids[5]]?.isDirty == true)
        }
    }
}
