import Foundation
import GRDB
import JSON
import Testing

@testable import Soups

@Suite struct ValueFilterTests {
    static let spec = soup("Accounts", ("Name", .string), ("Number", .integer), ("Code", .json1))

    static func names(_ found: [JSONValue: [JSONObject]]) -> [String] {
        found.values.flatMap { $0 }.compactMap { $0["Name"]?.stringValue }.sorted()
    }

    @Test func trackedLookupsFindOldAndNewEntriesAndSkipTheRest() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Name": "before", "Number": 1])], into: "Accounts")
            try await store.trackValues(in: "Accounts", path: "Name")
            try await store.trackValues(in: "Accounts", path: "Number")
            #expect(store.valueFilter(for: "Accounts", path: "Name") != nil)
            // Written after tracking: through upsert, a queued upsert and a change set.
            try await store.upsert([entry(["Name": "upserted", "Number": 2])], into: "Accounts")
            let prepared = try await store.prepare([entry(["Name": "queued", "Number": 3])], for: "Accounts")
            _ = try await store.startUpsert(prepared).value()
            var changes = SoupChangeSet()
            changes.save(entry(["Name": "changed", "Number": 4]), in: "Accounts")
            try await store.apply(changes)

            let found = try await store.entries(in: "Accounts", where: "Name", in: ["before", "upserted", "queued", "changed", "never"])
            #expect(Self.names(found) == ["before", "changed", "queued", "upserted"])
            #expect(try await store.entries(in: "Accounts", where: "Name", in: ["never", "nor this"]).isEmpty)
            // Integer index values compare as the column stores them: "3" finds 3.
            #expect(Self.names(try await store.entries(in: "Accounts", where: "Number", in: [3, "4", 5])) == ["changed", "queued"])
            // An update that changes the value is found under its new value.
            let queued = try #require(found["queued"]?.first)
            var renamed = queued
            renamed["Name"] = "renamed"
            try await store.upsert([renamed], into: "Accounts")
            #expect(Self.names(try await store.entries(in: "Accounts", where: "Name", in: ["renamed"])) == ["renamed"])
        }
    }

    /// Flags set in SQL (``SoupStore/flagAll(_:in:)``) reach the flags' index columns and their
    /// tracked filters; a soup that indexes a flag for full-text search is left to the entry path.
    @Test func flaggingEveryEntryKeepsTheFlagsFiltersAndColumns() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("Accounts", ("Name", .string), (SyncField.local, .string), (SyncField.locallyUpdated, .integer)))
            // Tracked while no entry holds `true`: only the flagging can have told the filters.
            try await store.upsert([entry(["Name": "a"]), entry(["Name": "b", SyncField.local: false, SyncField.locallyUpdated: false])],
                                   into: "Accounts")
            try await store.trackValues(in: "Accounts", path: SyncField.local)
            try await store.trackValues(in: "Accounts", path: SyncField.locallyUpdated)
            #expect(try await store.entries(in: "Accounts", where: SyncField.locallyUpdated, in: [true]).isEmpty)
            let counts = try await store.flagAll(SyncField.locallyUpdated, in: "Accounts")
            #expect(counts == SoupStore.FlagCounts(flagged: ["Accounts": 2]))
            #expect(Self.names(try await store.entries(in: "Accounts", where: SyncField.local, in: [true])) == ["a", "b"])
            #expect(Self.names(try await store.entries(in: "Accounts", where: SyncField.locallyUpdated, in: [true])) == ["a", "b"])
            #expect(try await store.dirtyEntries(in: "Accounts").count == 2)
            // Again: nothing left to flag.
            #expect(try await store.flagAll(SyncField.locallyUpdated, in: "Accounts") == SoupStore.FlagCounts(unchanged: ["Accounts": 2]))

            try await store.registerSoup(soup("Texts", ("Name", .string), (SyncField.locallyCreated, .fullText)))
            try await store.upsert([entry(["Name": "t"])], into: "Texts")
            #expect(try await store.flagAll(SyncField.locallyCreated, in: "Texts") == nil)
            #expect(try await store.dirtyEntries(in: "Texts").isEmpty)
        }
    }

    @Test func pathsWithoutAnIndexColumnAreNotTracked() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.trackValues(in: "Accounts", path: "Code")
            try await store.trackValues(in: "Accounts", path: "NotIndexed")
            #expect(store.valueFilter(for: "Accounts", path: "Code") == nil)
            #expect(store.valueFilter(for: "Accounts", path: "NotIndexed") == nil)
            try await store.upsert([entry(["Name": "a", "Code": "X"])], into: "Accounts")
            #expect(Self.names(try await store.entries(in: "Accounts", where: "Code", in: ["X"])) == ["a"])
        }
    }

    @Test func reRegisteringOrDroppingASoupForgetsItsFilters() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.trackValues(in: "Accounts", path: "Name")
            try await store.registerSoup(soup("Accounts", ("Name", .string), ("Number", .integer), ("Code", .json1), ("City", .string)))
            #expect(store.valueFilter(for: "Accounts", path: "Name") == nil)
            try await store.trackValues(in: "Accounts", path: "Name")
            try await store.dropSoup(named: "Accounts")
            #expect(store.valueFilter(for: "Accounts", path: "Name") == nil)
            // The soup made again from scratch: its entries are found.
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Name": "again"])], into: "Accounts")
            #expect(Self.names(try await store.entries(in: "Accounts", where: "Name", in: ["again"])) == ["again"])
        }
    }

    @Test func aFullFilterIsRebuiltLargerAndKeepsEveryValue() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert((0..<10).map { entry(["Name": .string("old \($0)")]) }, into: "Accounts")
            // 1,024 bits hold 64 values at 16 bits each: 500 more fill it several times over.
            try await store.trackValues(in: "Accounts", path: "Name", minimumBits: 1024)
            let filter = try #require(store.valueFilter(for: "Accounts", path: "Name"))
            #expect(filter.bitCount == 1024)
            for chunk in (0..<500).map({ entry(["Name": .string("new \($0)")]) }).chunked(into: 100) {
                try await store.upsert(chunk, into: "Accounts")
            }
            #expect(filter.bitCount >= 510 * 16)
            let all = (0..<10).map { "old \($0)" } + (0..<500).map { "new \($0)" }
            for name in all { #expect(filter.mightContain(name.databaseValue), "\(name)") }
            let found = try await store.entries(in: "Accounts", where: "Name", in: all.map { .string($0) })
            #expect(found.count == 510)
        }
    }

    @Test func queuedUpsertsCommitInTheOrderQueued() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            var queued: [PendingUpsert] = []
            for batch in 0..<5 {
                let prepared = try await store.prepare((0..<50).map { entry(["Name": .string("b\(batch)-\($0)")]) }, for: "Accounts")
                queued.append(store.startUpsert(prepared))
            }
            var ids: [Int64] = []
            for pending in queued.reversed() { ids = try await pending.value().ids + ids }
            #expect(ids == Array(1...250))
            let stored = try await store.retrieve(ids: [1, 51, 250], from: "Accounts")
            #expect(stored.compactMap { $0["Name"]?.stringValue } == ["b0-0", "b1-0", "b4-49"])
        }
    }

    @Test func aFailedQueuedUpsertReportsItsError() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let prepared = try await store.prepare([entry(["Name": "ghost", "_soupEntryId": 42])], for: "Accounts")
            await #expect(throws: SoupStoreError.unknownEntry(soup: "Accounts", id: 42)) {
                try await store.startUpsert(prepared).value()
            }
        }
    }
}
