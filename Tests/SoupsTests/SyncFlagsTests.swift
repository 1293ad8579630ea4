import Foundation
import JSON
import Testing

@testable import Soups

/// How `__local__` is indexed in a soup under test (`nil`: not indexed).
struct LocalIndexing: Sendable, CustomTestStringConvertible {
    let type: IndexType?
    var testDescription: String { type.map { "__local__ as \($0.rawValue)" } ?? "__local__ not indexed" }

    static let all: [LocalIndexing] = [.init(type: .string), .init(type: .integer), .init(type: .json1), .init(type: .floating), .init(type: nil)]

    var spec: SoupSpec {
        var indexes = [IndexSpec(path: "Id", type: .string)]
        if let type { indexes.append(IndexSpec(path: SyncField.local, type: type)) }
        return SoupSpec(name: "S", indexes: indexes)
    }
}

@Suite struct SyncFlagsTests {
    /// Entries 1–3 are dirty (`true`, `"true"`, `1`), 4–6 clean (`false`, `"false"`, `0`), 7 has no flag.
    static let mixed: [JSONObject] = [
        entry(["Id": "r1", "__local__": true]),
        entry(["Id": "r2", "__local__": "true"]),
        entry(["Id": "r3", "__local__": 1]),
        entry(["Id": "r4", "__local__": false]),
        entry(["Id": "r5", "__local__": "false"]),
        entry(["Id": "r6", "__local__": 0]),
        entry(["Id": "r7"]),
    ]

    @Test(arguments: LocalIndexing.all)
    func everyShapeOfLocalIsFoundAsDirty(_ indexing: LocalIndexing) async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(indexing.spec)
            let stored = try await store.upsert(Self.mixed, into: "S")
            // Flags are normalized to JSON booleans on write.
            #expect(values(stored, SyncField.local) == [true, true, true, false, false, false, nil])

            let dirty = try await store.dirtyEntries(in: "S")
            #expect(values(dirty, "Id") == ["r1", "r2", "r3"])
            #expect(try await store.dirtyEntryIds(in: "S") == dirty.compactMap(\.soupEntryId))

            for key: JSONValue in [true, "true", 1, "TRUE", 1.0] {
                let found = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: key)))
                #expect(values(found, "Id") == ["r1", "r2", "r3"], "key \(key.jsonString)")
                #expect(try await store.count(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: key))) == 3)
            }
            for key: JSONValue in [false, "false", 0] {
                let found = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: key)))
                #expect(values(found, "Id") == ["r4", "r5", "r6"], "key \(key.jsonString)")
            }
            #expect(try await store.counts(of: "S") == SoupCounts(total: 7, dirty: 3, failed: 0))
        }
    }

    @Test(arguments: LocalIndexing.all)
    func smartSQLOnLocalSeesEveryShape(_ indexing: LocalIndexing) async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(indexing.spec)
            try await store.upsert(Self.mixed, into: "S")
            let rows = try await store.smartQuery("SELECT {S:Id} FROM {S} WHERE {S:__local__} = ? ORDER BY {S:_soupEntryId}", arguments: [
                indexing.type == .string ? JSONValue.string("true") : JSONValue.integer(1),
            ])
            #expect(rows == [["r1"], ["r2"], ["r3"]])
        }
    }

    @Test(arguments: [SyncField.locallyCreated, SyncField.locallyUpdated, SyncField.locallyDeleted])
    func operationFlagsSetLocal(_ flag: String) async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string), (SyncField.local, .string)))
            let stored = try await store.upsert([
                entry(["Id": "a", flag: "true"]),
                entry(["Id": "b", flag: 1, "__local__": false]),
                entry(["Id": "c", flag: false, "__local__": "0"]),
            ], into: "S")
            #expect(values(stored, SyncField.local) == [true, true, false])
            #expect(values(stored, flag) == [true, true, false])
            #expect(values(try await store.dirtyEntries(in: "S"), "Id") == ["a", "b"])
            let found = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: "true")))
            #expect(values(found, "Id") == ["a", "b"])
        }
    }

    @Test func allFourFlagsAreNormalized() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string)))
            let stored = try await store.upsert([
                entry(["Id": "a", "__local__": "TRUE", "__locally_created__": "true", "__locally_updated__": 0, "__locally_deleted__": "1"]),
            ], into: "S")
            let flags = SyncField.flags.map { stored[0][$0] }
            #expect(flags == [true, true, false, true])
            let read = try await store.retrieve(ids: [1], from: "S")
            #expect(SyncField.flags.map { read[0][$0] } == [true, true, false, true])
        }
    }

    @Test func dirtyEntriesComeInNumericIdOrder() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string), (SyncField.local, .string)))
            // 15 entries, every one dirty, in several shapes; plus a clean one in the middle.
            var input: [JSONObject] = []
            for i in 1...15 {
                let flag: JSONValue = [true, "true", 1][i % 3]
                input.append(entry(["Id": .string("r\(i)"), "__local__": i == 8 ? false : flag]))
            }
            try await store.upsert(input, into: "S")
            let dirty = try await store.dirtyEntries(in: "S")
            let dirtyIds = ids(dirty)
            #expect(dirtyIds == [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15])
            let two = try #require(dirtyIds.firstIndex(of: 2))
            let ten = try #require(dirtyIds.firstIndex(of: 10))
            #expect(two < ten)

            // Paging with afterId / limit walks the same order.
            var walked: [Int64] = []
            var after: Int64 = 0
            while true {
                let page = try await store.dirtyEntries(in: "S", afterId: after, limit: 4)
                guard let last = page.last?.soupEntryId else { break }
                walked += ids(page)
                after = last
            }
            #expect(walked == dirtyIds)

            // An exact query on __local__ uses the same numeric order by default.
            let exact = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: true), pageSize: 5))
            #expect(ids(exact) == [1, 2, 3, 4, 5])
            let second = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: true), pageSize: 5), page: 1)
            #expect(ids(second) == [6, 7, 9, 10, 11])
        }
    }

    @Test func cleaningAnEntryRemovesItFromDirtyEntries() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string), (SyncField.local, .integer)))
            let stored = try await store.upsert([
                entry(["Id": "a", "__local__": true, "__locally_updated__": true, "__last_error__": "{\"message\":\"boom\"}"]),
                entry(["Id": "b", "__local__": true, "__locally_created__": true]),
                entry(["Id": "c"]),
            ], into: "S")
            #expect(try await store.counts(of: "S") == SoupCounts(total: 3, dirty: 2, failed: 1))
            var cleaned = stored[0]
            cleaned.markClean()
            try await store.upsert([cleaned], into: "S")
            #expect(values(try await store.dirtyEntries(in: "S"), "Id") == ["b"])
            #expect(try await store.counts(of: "S") == SoupCounts(total: 3, dirty: 1, failed: 0))
            let read = try await store.retrieve(ids: [1], from: "S")[0]
            #expect(SyncField.flags.map { read[$0] } == [false, false, false, false])
            #expect(read[SyncField.lastError] == .null)
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .exact(path: SyncField.local, matchKey: "true"))) == 1)
        }
    }

    @Test func failedCountNeedsADirtyEntryWithAnError() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string)))
            try await store.upsert([
                entry(["Id": "a", "__local__": true, "__last_error__": ["errorCode": "REQUIRED_FIELD_MISSING"]]),
                entry(["Id": "b", "__local__": true, "__last_error__": nil]),
                entry(["Id": "c", "__local__": false, "__last_error__": "stale"]),
                entry(["Id": "d", "__local__": "true"]),
            ], into: "S")
            #expect(try await store.counts(of: "S") == SoupCounts(total: 4, dirty: 3, failed: 1))
        }
    }

    @Test func helpers() {
        #expect(SyncField.isLocalId("local_123"))
        #expect(!SyncField.isLocalId("001000000000001AAA"))
        var object = entry(["__local__": "true"])
        #expect(object.isDirty)
        object["__local__"] = 0
        #expect(!object.isDirty)
        object.normalizeSyncFlags()
        #expect(object["__local__"] == false)
        #expect(entry(["_soupEntryId": 12]).soupEntryId == 12)
    }

    /// Record data is every member but `attributes`, `_soup…` and `__…__` names.
    @Test(arguments: [
        ("Name", true), ("Id", true), ("account__c", true), ("attributes", false), ("attributesX", true), ("a", true),
        ("_soupEntryId", false), ("_soup", false), ("_sou", true), ("_", true), ("__", false), ("___", false),
        ("__local__", false), ("__sync_id__", false), ("__x", true), ("x__", true), ("_x_", true), ("", true), ("_é__", true),
    ])
    func dataFieldsAreTold(key: String, isData: Bool) {
        #expect(JSONObject.isDataField(key) == isData)
    }
}
