import Foundation
import GRDB
import JSON
import Testing

@testable import Soups

/// ``SoupMerge``: entries from the org matched by key in their own write.
@Suite struct MergeTests {
    /// A clean entry of sync 7 holding `fields`.
    private func synced(_ fields: JSONValue, sync: Int64 = 7) -> JSONObject {
        var object = entry(fields)
        object[SyncField.syncId] = .integer(sync)
        object.markClean()
        return object
    }

    private func merge(_ entries: [JSONObject], into store: SoupStore, soup: String = "Accounts") async throws -> SoupMerge.Counts {
        var changes = SoupChangeSet()
        changes.merge(entries, into: soup, matching: "Id")
        let applied = try await store.apply(changes)
        #expect(applied.merges.count == 1)
        return applied.merges[0]
    }

    @Test func createsUpdatesAndLeavesUnchangedKeepingEachEntrysId() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .string), ("Name", .string)))
            let first = try await merge([synced(["Id": "001A", "Name": "Acme"]), synced(["Id": "001B", "Name": "Bolt"])], into: store)
            #expect(first == SoupMerge.Counts(created: 2))
            // A date no write of this test can give: a rewritten entry would lose it.
            try await store.pool.write { db in
                try db.execute(sql: "UPDATE TABLE_1 SET soup = json_set(soup, '$._soupLastModifiedDate', 5)")
            }
            let before = try await allEntries(store, "Accounts")
            #expect(before[0][SyncField.soupLastModifiedDate] == 5)
            // Again: one the same, one changed, one new.
            let second = try await merge([synced(["Id": "001A", "Name": "Acme"]), synced(["Id": "001B", "Name": "Bolt 2"]),
                                          synced(["Id": "001C", "Name": "Core"])], into: store)
            #expect(second == SoupMerge.Counts(created: 1, updated: 1, unchanged: 1))
            let after = try await allEntries(store, "Accounts")
            #expect(ids(after) == ids(before) + [3])
            #expect(values(after, "Name") == ["Acme", "Bolt 2", "Core"])
            // The unchanged entry was not written again; the others were, and are confirmed.
            #expect(after[0][SyncField.soupLastModifiedDate] == before[0][SyncField.soupLastModifiedDate])
            let confirmed = try await store.confirmed(ids: [1, 2, 3], in: "Accounts")
            #expect([1, 2, 3].map { confirmed[$0]?["Name"] } == ["Acme", "Bolt 2", "Core"])
            // The index columns follow: the old name is gone from the index.
            #expect(try await store.query(QuerySpec(soupName: "Accounts", kind: .exact(path: "Name", matchKey: "Bolt"))).isEmpty)
            #expect(ids(try await store.query(QuerySpec(soupName: "Accounts", kind: .exact(path: "Name", matchKey: "Bolt 2")))) == [2])
        }
    }

    @Test func anEntryIsTheSameOnlyWhenCleanOfTheSameSyncWithTheSameDataHoweverItsTextIsWritten() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .string)))
            // Stored with the members in another order: the text differs, the data does not.
            var reordered = JSONObject()
            let fresh = synced(["Id": "001A", "Name": "Acme", "Industry": "Energy"])
            for key in fresh.keys.reversed() { reordered[key] = fresh[key] }
            try await store.upsert([reordered, synced(["Id": "001B", "Name": "Bolt"], sync: 3),
                                    synced(["Id": "001C", "Name": "Core"]), synced(["Id": "001D", "Name": "Dash"])], into: "Accounts")
            var dirty = try await allEntries(store, "Accounts")[2]
            dirty[SyncField.local] = true
            dirty[SyncField.locallyUpdated] = true
            try await store.upsert([dirty], into: "Accounts")
            let counts = try await merge([fresh, synced(["Id": "001B", "Name": "Bolt"]), synced(["Id": "001C", "Name": "Core"]),
                                          synced(["Id": "001D", "Name": "Dash", "Extra": .null])], into: store)
            // 001A the same; 001B last written by another sync; 001C dirty (overwritten, cleaned);
            // 001D has a field more.
            #expect(counts == SoupMerge.Counts(updated: 3, unchanged: 1))
            let after = try await allEntries(store, "Accounts")
            #expect(values(after, SyncField.syncId) == [7, 7, 7, 7])
            #expect(values(after, SyncField.local) == [false, false, false, false])
            #expect(after[3]["Extra"] == .null && after[3].contains("Extra"))
        }
    }

    @Test func aKeyMatchedTwiceInOneMergeMakesOneEntryAndSeveralStoredEntriesMatchTheOldest() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .string)))
            try await store.upsert([entry(["Id": "001B", "Name": "old"]), entry(["Id": "001B", "Name": "older"])], into: "Accounts")
            let counts = try await merge([synced(["Id": "001A", "Name": "Acme"]), synced(["Id": "001A", "Name": "Acme 2"]),
                                          synced(["Id": "001B", "Name": "Bolt"]), synced(["Name": "no id"])], into: store)
            #expect(counts == SoupMerge.Counts(created: 2, updated: 2))
            let after = try await allEntries(store, "Accounts")
            #expect(values(after, "Name") == ["Bolt", "older", "Acme 2", "no id"])
            #expect(ids(after) == [1, 2, 3, 4])
        }
    }

    @Test func storedTextWithAnythingBeyondTheStoreFieldsIsComparedByItsData() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .string)))
            let records = [synced(["Id": "001A", "n": 1]), synced(["Id": "001B", "n": 1]), synced(["Id": "001C", "n": 1])]
            _ = try await merge(records, into: store)
            // A member after the store's two fields; the prefix of a longer number; a fraction
            // in the date: none is the text the fast path accepts.
            try await store.pool.write { db in
                try db.execute(sql: "UPDATE TABLE_1 SET soup = substr(soup, 1, length(soup) - 1) || ',\"x\":1}' WHERE id = 1")
                try db.execute(sql: "UPDATE TABLE_1 SET soup = replace(soup, '\"n\":1', '\"n\":12') WHERE id = 2")
                try db.execute(sql: "UPDATE TABLE_1 SET soup = substr(soup, 1, length(soup) - 1) || '.5}' WHERE id = 3")
            }
            let counts = try await merge(records, into: store)
            // The extra member and the longer number are data the record lacks; the date is not data.
            #expect(counts == SoupMerge.Counts(updated: 2, unchanged: 1))
            let after = try await allEntries(store, "Accounts")
            #expect(values(after, "n") == [1, 1, 1])
            #expect(!after[0].contains("x"))
        }
    }

    @Test func aValueFilterStaysCurrentThroughAMerge() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .string)))
            try await store.upsert([synced(["Id": "001A", "Name": "Acme"])], into: "Accounts")
            try await store.trackValues(in: "Accounts", path: "Id")
            let counts = try await merge((0..<50).map { synced(["Id": .string("001N\($0)"), "Name": "New"]) }
                                         + [synced(["Id": "001A", "Name": "Acme"])], into: store)
            #expect(counts == SoupMerge.Counts(created: 50, unchanged: 1))
            // What the merge added is known to the filter: merged again, every one is found.
            let again = try await merge((0..<50).map { synced(["Id": .string("001N\($0)"), "Name": "New"]) }, into: store)
            #expect(again == SoupMerge.Counts(unchanged: 50))
            #expect(try await allEntries(store, "Accounts").count == 51)
        }
    }

    @Test func aKeyWithoutAnIndexColumnIsRefusedAndNothingIsWritten() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .json1), ("Name", .string)))
            var changes = SoupChangeSet()
            changes.save(entry(["Name": "saved"]), in: "Accounts")
            changes.merge([synced(["Id": "001A"])], into: "Accounts", matching: "Id")
            await #expect(throws: SoupStoreError.notIndexed(soup: "Accounts", path: "Id")) { try await store.apply(changes) }
            #expect(try await allEntries(store, "Accounts").isEmpty)
            changes = SoupChangeSet()
            changes.merge([synced(["Name": "x"])], into: "Accounts", matching: "Missing")
            await #expect(throws: SoupStoreError.notIndexed(soup: "Accounts", path: "Missing")) { try await store.apply(changes) }
        }
    }

    /// A sync down queues each page's write behind the one before before knowing how that one
    /// ends: behind a failure it writes nothing, its sync state with it; behind a commit it writes.
    @Test func aWriteQueuedBehindAFailedOneWritesNothing() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Accounts", ("Id", .string)))
            var state = try await store.syncs.create(SyncState(name: "down", type: .syncDown, soupName: "Accounts", target: [:], options: [:]))
            func page(_ id: String, matching key: String = "Id", progress: Int) async throws -> PreparedChangeSet {
                var changes = SoupChangeSet()
                changes.merge([synced(["Id": .string(id)])], into: "Accounts", matching: key)
                state.progress = progress
                changes.syncState = state
                return try await store.prepare(changes)
            }
            let pages = [try await page("001A", matching: "Missing", progress: 10), try await page("001B", progress: 20),
                         try await page("001C", progress: 30), try await page("001D", progress: 40), try await page("001E", progress: 50)]
            // The writer held until every write is queued: none knows how the one before ends.
            let gate = DispatchSemaphore(value: 0)
            store.pool.asyncWriteWithoutTransaction { _ in gate.wait() }
            let failing = store.startApply(pages[0])
            let behind = store.startApply(pages[1], after: failing)
            let after = store.startApply(pages[2], after: behind)
            let first = store.startApply(pages[3])
            let second = store.startApply(pages[4], after: first)
            gate.signal()
            await #expect(throws: SoupStoreError.notIndexed(soup: "Accounts", path: "Missing")) { try await failing.value() }
            await #expect(throws: SoupStoreError.earlierWriteFailed) { try await behind.value() }
            await #expect(throws: SoupStoreError.earlierWriteFailed) { try await after.value() }
            // Behind a write that committed, the next one writes.
            #expect(try await first.value().merges == [SoupMerge.Counts(created: 1)])
            #expect(try await second.value().merges == [SoupMerge.Counts(created: 1)])
            #expect(values(try await allEntries(store, "Accounts"), "Id") == ["001D", "001E"])
            #expect(try await store.syncs.state(named: "down").progress == 50)
        }
    }
}
