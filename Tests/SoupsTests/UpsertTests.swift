import Foundation
import JSON
import Testing

@testable import Soups

@Suite struct UpsertTests {
    static let spec = soup("Accounts", ("Id", .string), ("Name", .string), ("Number", .integer), ("Code", .json1))

    @Test func insertSetsEntryIdAndLastModifiedDate() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let before = nowMillis()
            let stored = try await store.upsert([entry(["Name": "a"]), entry(["Name": "b"]), entry(["Name": "c"])], into: "Accounts")
            let after = nowMillis()
            #expect(ids(stored) == [1, 2, 3])
            for entry in stored {
                let modified = try #require(entry[SyncField.soupLastModifiedDate]?.integerValue)
                #expect(modified >= before && modified <= after)
                #expect(entry[SyncField.soupEntryId] == .integer(entry.soupEntryId!))
            }
            #expect(values(stored, "Name") == ["a", "b", "c"])
            // The stored text is what upsert returned, key order included.
            let retrieved = try await store.retrieve(ids: [3, 1, 2, 99], from: "Accounts")
            #expect(retrieved.map { JSONValue.object($0).jsonString } == [stored[2], stored[0], stored[1]].map { JSONValue.object($0).jsonString })
            #expect(retrieved[0].keys == ["Name", "_soupEntryId", "_soupLastModifiedDate"])
        }
    }

    /// Many entries are parsed on every core (`concurrentMap`, from 1,000): still in the order
    /// asked, a repeated id read twice, a missing one skipped — as a few are.
    @Test func retrievingManyKeepsTheOrderAsked() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let count = 1500
            let stored = try await store.upsert((0..<count).map { entry(["Name": .string("n\($0)"), "Number": .integer(Int64($0))]) }, into: "Accounts")
            let asked = Array(ids(stored).reversed()) + [Int64(count + 10), ids(stored)[7]]
            let retrieved = try await store.retrieve(ids: asked, from: "Accounts")
            #expect(retrieved.count == count + 1)
            #expect(retrieved.map(\.soupEntryId) == (Array(ids(stored).reversed()) + [ids(stored)[7]]).map { Optional($0) })
            #expect(retrieved.first?["Name"] == .string("n\(count - 1)"))
            #expect(retrieved.last?["Number"] == .integer(7))
        }
    }

    @Test func updateBySoupEntryId() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let stored = try await store.upsert([entry(["Name": "a", "Number": 1]), entry(["Name": "b", "Number": 2])], into: "Accounts")
            try await Task.sleep(for: .milliseconds(5))
            var changed = stored[1]
            changed["Name"] = "B"
            changed["Number"] = 20
            let updated = try await store.upsert([changed], into: "Accounts")
            #expect(ids(updated) == [2])
            #expect(updated[0][SyncField.soupLastModifiedDate]!.integerValue! > stored[1][SyncField.soupLastModifiedDate]!.integerValue!)
            #expect(try await store.count(QuerySpec(soupName: "Accounts")) == 2)
            #expect(values(try await allEntries(store, "Accounts"), "Name") == ["a", "B"])
            // Index columns follow the update.
            #expect(try await store.count(QuerySpec(soupName: "Accounts", kind: .exact(path: "Name", matchKey: "b"))) == 0)
            #expect(values(try await store.query(QuerySpec(soupName: "Accounts", kind: .exact(path: "Number", matchKey: 20))), "Name") == ["B"])
        }
    }

    @Test func updateOfAMissingSoupEntryIdFails() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            await #expect(throws: SoupStoreError.unknownEntry(soup: "Accounts", id: 42)) {
                try await store.upsert([entry(["Name": "x", "_soupEntryId": 42])], into: "Accounts")
            }
            #expect(try await store.count(QuerySpec(soupName: "Accounts")) == 0)
        }
    }

    @Test func externalIdWithNoMatchInserts() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Id": "001A", "Name": "a"])], into: "Accounts")
            let stored = try await store.upsert([entry(["Id": "001B", "Name": "b"])], into: "Accounts", externalIdPath: "Id")
            #expect(ids(stored) == [2])
            #expect(values(try await allEntries(store, "Accounts"), "Id") == ["001A", "001B"])
        }
    }

    @Test func externalIdWithOneMatchUpdatesIt() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Id": "001A", "Name": "a", "Keep": true]), entry(["Id": "001B", "Name": "b"])], into: "Accounts")
            let stored = try await store.upsert([entry(["Id": "001B", "Name": "b2"])], into: "Accounts", externalIdPath: "Id")
            #expect(ids(stored) == [2])
            let all = try await allEntries(store, "Accounts")
            #expect(values(all, "Name") == ["a", "b2"])
            // The entry is replaced, not merged: upsert stores exactly what it was given.
            #expect(all[1].keys == ["Id", "Name", "_soupEntryId", "_soupLastModifiedDate"])
        }
    }

    @Test func externalIdOnIntegerAndJson1Indexes() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Number": 7, "Code": "X", "Name": "a"]), entry(["Number": 8, "Code": "Y", "Name": "b"])], into: "Accounts")
            let byNumber = try await store.upsert([entry(["Number": 8, "Name": "b2"])], into: "Accounts", externalIdPath: "Number")
            #expect(ids(byNumber) == [2])
            let byCode = try await store.upsert([entry(["Code": "X", "Name": "a2"])], into: "Accounts", externalIdPath: "Code")
            #expect(ids(byCode) == [1])
            let newCode = try await store.upsert([entry(["Code": "Z", "Name": "c"])], into: "Accounts", externalIdPath: "Code")
            #expect(ids(newCode) == [3])
            #expect(values(try await allEntries(store, "Accounts"), "Name") == ["a2", "b2", "c"])
        }
    }

    @Test func externalIdOnADottedPath() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("attributes.key", .string)))
            try await store.upsert([entry(["attributes": ["key": "k1"], "v": 1])], into: "S", externalIdPath: "attributes.key")
            try await store.upsert([entry(["attributes": ["key": "k1"], "v": 2])], into: "S", externalIdPath: "attributes.key")
            let all = try await allEntries(store, "S")
            #expect(ids(all) == [1])
            #expect(values(all, "v") == [2])
        }
    }

    /// The writer binds each entry's JSON (and what the org confirmed) for SQLite to read in place,
    /// from a buffer reused entry after entry: texts that grow and shrink within one write, then
    /// again as updates that record confirmed values, are each stored whole, none in another's place.
    @Test func eachEntryOfOneWriteIsStoredWithItsOwnText() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let lengths = (0..<60).map { ($0 * 37) % 400 }
            func name(_ length: Int, _ round: Int) -> JSONValue { .string("\(round)" + String(repeating: "é", count: length)) }
            let stored = try await store.upsert(lengths.map { entry(["Name": name($0, 1), "Number": .integer(Int64($0))]) }, into: "Accounts")
            var changes = SoupChangeSet()
            changes.confirmEverySave = ["Accounts"]
            for (entry, length) in zip(stored, lengths.reversed()) {
                var updated = entry
                updated["Name"] = name(length, 2)
                updated["Code"] = length % 2 == 0 ? .string("") : .array([.integer(Int64(length))])
                changes.save(updated, in: "Accounts")
            }
            // New entries in the same write: inserts that record what the org confirmed too.
            let added = lengths.prefix(9).map { entry(["Name": name($0, 3), "Number": .integer(Int64(-$0))]) }
            for entry in added { changes.save(entry, in: "Accounts") }
            try await store.apply(changes)
            let addedIds = Array(Int64(lengths.count + 1)...Int64(lengths.count + added.count))
            let addedRead = try await store.retrieve(ids: addedIds, from: "Accounts")
            #expect(values(addedRead, "Name") == lengths.prefix(9).map { name($0, 3) })
            let addedConfirmed = try await store.confirmed(ids: addedIds, in: "Accounts")
            #expect(addedIds.map { addedConfirmed[$0]?["Number"] } == lengths.prefix(9).map { .integer(Int64(-$0)) })
            let read = try await store.retrieve(ids: ids(stored), from: "Accounts")
            #expect(values(read, "Name") == lengths.reversed().map { name($0, 2) })
            #expect(values(read, "Code") == lengths.reversed().map { $0 % 2 == 0 ? .string("") : .array([.integer(Int64($0))]) })
            #expect(values(read, "Number") == lengths.map { .integer(Int64($0)) })
            let confirmed = try await store.confirmed(ids: ids(stored), in: "Accounts")
            #expect(ids(stored).map { confirmed[$0]?["Name"] } == lengths.reversed().map { name($0, 2) })
        }
    }

    @Test func externalIdWithSeveralMatchesFails() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Id": "001A", "Name": "a"]), entry(["Id": "001A", "Name": "b"])], into: "Accounts")
            let error = SoupStoreError.ambiguousExternalId(soup: "Accounts", path: "Id", value: "\"001A\"")
            await #expect(throws: error) {
                try await store.upsert([entry(["Id": "001A", "Name": "c"])], into: "Accounts", externalIdPath: "Id")
            }
            #expect(error.description == "soup \"Accounts\" has more than one entry where Id = \"001A\"")
            #expect(values(try await allEntries(store, "Accounts"), "Name") == ["a", "b"])
        }
    }

    @Test(arguments: [
        ("empty string", JSONValue.string("")),
        ("null", JSONValue.null),
    ])
    func emptyExternalIdFails(_ label: String, _ value: JSONValue) async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            await #expect(throws: SoupStoreError.emptyExternalId(soup: "Accounts", path: "Id")) {
                try await store.upsert([entry(["Id": value, "Name": "x"])], into: "Accounts", externalIdPath: "Id")
            }
            #expect(try await store.count(QuerySpec(soupName: "Accounts")) == 0)
        }
    }

    @Test func missingExternalIdFails() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            await #expect(throws: SoupStoreError.emptyExternalId(soup: "Accounts", path: "Id")) {
                try await store.upsert([entry(["Name": "x"])], into: "Accounts", externalIdPath: "Id")
            }
        }
    }

    @Test func unindexedExternalIdPathFails() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let error = SoupStoreError.notIndexed(soup: "Accounts", path: "Phone")
            await #expect(throws: error) {
                try await store.upsert([entry(["Phone": "555"])], into: "Accounts", externalIdPath: "Phone")
            }
            #expect(error.description == "soup \"Accounts\" does not have an index on \"Phone\"")
        }
    }

    @Test func aFailingEntryRollsBackTheWholeBatch() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            await #expect(throws: SoupStoreError.emptyExternalId(soup: "Accounts", path: "Id")) {
                try await store.upsert(
                    [entry(["Id": "1", "Name": "a"]), entry(["Id": "2", "Name": "b"]), entry(["Id": "", "Name": "c"])],
                    into: "Accounts", externalIdPath: "Id")
            }
            #expect(try await store.count(QuerySpec(soupName: "Accounts")) == 0)
            // The ids the failed batch would have used are still free.
            #expect(ids(try await store.upsert([entry(["Id": "1"])], into: "Accounts")) == [1])
        }
    }

    @Test func sameExternalIdTwiceInOneBatchMakesOneEntry() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let stored = try await store.upsert(
                [entry(["Id": "001A", "Name": "first"]), entry(["Id": "001A", "Name": "second"])], into: "Accounts", externalIdPath: "Id")
            #expect(ids(stored) == [1, 1])
            #expect(values(try await allEntries(store, "Accounts"), "Name") == ["second"])
        }
    }

    @Test func idsAreNotReusedAfterDeletingTheLast() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Name": "a"]), entry(["Name": "b"]), entry(["Name": "c"])], into: "Accounts")
            #expect(try await store.delete(ids: [3], from: "Accounts") == 1)
            #expect(ids(try await store.upsert([entry(["Name": "d"])], into: "Accounts")) == [4])
        }
    }

    @Test func indexValuesAreConvertedToTheColumnType() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("s", .string), ("i", .integer), ("f", .floating)))
            try await store.upsert([
                entry(["name": "a", "s": 42, "i": "17", "f": "2.5"]),
                entry(["name": "b", "s": true, "i": 3.0, "f": 4]),
                entry(["name": "c", "s": "text", "i": true, "f": false]),
            ], into: "S")
            func names(_ kind: QuerySpec.Kind) async throws -> [JSONValue?] {
                values(try await store.query(QuerySpec(soupName: "S", kind: kind)), "name")
            }
            #expect(try await names(.exact(path: "s", matchKey: "42")) == ["a"])
            #expect(try await names(.exact(path: "s", matchKey: 42)) == ["a"])
            #expect(try await names(.exact(path: "s", matchKey: "true")) == ["b"])
            #expect(try await names(.exact(path: "i", matchKey: 17)) == ["a"])
            #expect(try await names(.exact(path: "i", matchKey: 3)) == ["b"])
            #expect(try await names(.exact(path: "i", matchKey: 1)) == ["c"])
            #expect(try await names(.exact(path: "f", matchKey: 2.5)) == ["a"])
            #expect(try await names(.exact(path: "f", matchKey: 4)) == ["b"])
            #expect(try await names(.exact(path: "f", matchKey: 0)) == ["c"])
            // The entry itself keeps the values as written.
            let a = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: "s", matchKey: "42")))
            #expect(a.first?["s"] == 42)
            #expect(a.first?["i"] == "17")
        }
    }

    /// An update names only the columns whose stored values change (SQLite rewrites every index
    /// over a named column): each index, the full-text table and the sync columns must still
    /// follow every change — including a value of another storage class that compares equal.
    @Test func updatesKeepEveryIndexCurrentWhateverChanges() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("s", .string), ("i", .integer), ("f", .floating), ("d", .fullText), ("j", .json1)))
            let first = try await store.upsert([
                entry(["name": "a", "s": "x", "i": 1, "f": 1.5, "d": "quick fox", "j": 1, "__local__": true]),
                entry(["name": "b", "s": "y", "i": 2, "f": 2.5, "d": "lazy dog", "j": 2]),
            ], into: "S")
            func names(_ kind: QuerySpec.Kind) async throws -> [JSONValue?] {
                values(try await store.query(QuerySpec(soupName: "S", kind: kind)), "name")
            }
            // One column changes at a time; the others must keep answering.
            var a = first[0]
            a["s"] = "x2"
            try await store.upsert([a], into: "S")
            #expect(try await names(.exact(path: "s", matchKey: "x")) == [])
            #expect(try await names(.exact(path: "s", matchKey: "x2")) == ["a"])
            #expect(try await names(.exact(path: "i", matchKey: 1)) == ["a"])
            #expect(try await names(.match(path: "d", matchKey: "fox")) == ["a"])
            a["d"] = "slow bear"
            try await store.upsert([a], into: "S")
            #expect(try await names(.match(path: "d", matchKey: "fox")) == [])
            #expect(try await names(.match(path: "d", matchKey: "bear")) == ["a"])
            #expect(try await names(.exact(path: "s", matchKey: "x2")) == ["a"])
            // Values of another JSON type than their column's ("1" for an integer column, 1 for a
            // string one, an integral number for a floating one), converted as they are written.
            a["i"] = "1"
            a["s"] = 7
            a["f"] = 3
            try await store.upsert([a], into: "S")
            #expect(try await names(.exact(path: "i", matchKey: 1)) == ["a"])
            #expect(try await names(.exact(path: "s", matchKey: "7")) == ["a"])
            #expect(try await names(.exact(path: "f", matchKey: 3)) == ["a"])
            #expect(try await names(.exact(path: "f", matchKey: 1.5)) == [])
            // An unchanged rewrite changes nothing it should not; clean flags leave the dirty set.
            a["__local__"] = false
            try await store.upsert([a, a], into: "S")
            #expect(try await store.dirtyEntryIds(in: "S").isEmpty)
            #expect(try await names(.match(path: "d", matchKey: "bear")) == ["a"])
            #expect(try await names(.exact(path: "j", matchKey: 1)) == ["a"])
            var b = first[1]
            b["__local__"] = true
            b["j"] = 3
            try await store.upsert([b], into: "S")
            #expect(try await store.dirtyEntryIds(in: "S") == [b.soupEntryId!])
            #expect(try await names(.exact(path: "j", matchKey: 3)) == ["b"])
            #expect(try await names(.exact(path: "s", matchKey: "y")) == ["b"])
            #expect(try await names(.match(path: "d", matchKey: "dog")) == ["b"])
            // In one write, each entry is first tried as the one before it changed: a different
            // change must still reach its index.
            var (a2, b2) = (a, b)
            a2["s"] = "x3"
            b2["i"] = 9
            b2["d"] = "red cat"
            try await store.upsert([a2, b2], into: "S")
            #expect(try await names(.exact(path: "s", matchKey: "x3")) == ["a"])
            #expect(try await names(.exact(path: "i", matchKey: 9)) == ["b"])
            #expect(try await names(.exact(path: "i", matchKey: 2)) == [])
            #expect(try await names(.match(path: "d", matchKey: "cat")) == ["b"])
            #expect(try await names(.match(path: "d", matchKey: "dog")) == [])
            // A guess that fits one entry, then an entry that is not there: refused, nothing written.
            var a3 = a2
            a3["s"] = "x4"
            var gone = a3
            gone[SyncField.soupEntryId] = 99
            await #expect(throws: SoupStoreError.unknownEntry(soup: "S", id: 99)) { try await store.upsert([a3, a3, gone], into: "S") }
            #expect(try await names(.exact(path: "s", matchKey: "x3")) == ["a"])
        }
    }

    /// A save that names the entry it replaces writes only the columns that change from it; an
    /// entry changed since it was read is still written whole, and a missing one is refused.
    @Test func aSaveReplacingAStaleReadStillKeepsEveryIndexCurrent() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Name", .string), ("Code", .integer), ("d", .fullText)))
            let read = try await store.upsert([entry(["Name": "a", "Code": 1, "d": "red fox"])], into: "S")[0]
            func names(_ kind: QuerySpec.Kind) async throws -> [JSONValue?] {
                values(try await store.query(QuerySpec(soupName: "S", kind: kind)), "Name")
            }
            // Accurate: only Code changes.
            var saved = read
            saved["Code"] = 2
            var changes = SoupChangeSet()
            changes.save(saved, in: "S", replacing: read)
            try await store.apply(changes)
            #expect(try await names(.exact(path: "Code", matchKey: 2)) == ["a"])
            #expect(try await names(.exact(path: "Name", matchKey: "a")) == ["a"])
            #expect(try await names(.match(path: "d", matchKey: "fox")) == ["a"])
            // Stale: the entry was changed to "b" after `read`; a save of "a" over `read` looks
            // like no change to Name and the full text, yet must write them.
            var other = saved
            other["Name"] = "b"
            other["d"] = "blue whale"
            try await store.upsert([other], into: "S")
            changes = SoupChangeSet()
            changes.save(saved, in: "S", replacing: read)
            try await store.apply(changes)
            #expect(try await names(.exact(path: "Name", matchKey: "b")) == [])
            #expect(try await names(.exact(path: "Name", matchKey: "a")) == ["a"])
            #expect(try await names(.match(path: "d", matchKey: "whale")) == [])
            #expect(try await names(.match(path: "d", matchKey: "fox")) == ["a"])
            // A partial update still records what the org confirmed.
            var confirmedSave = saved
            confirmedSave["Code"] = 3
            changes = SoupChangeSet()
            changes.save(confirmedSave, in: "S", confirmed: true, replacing: saved)
            try await store.apply(changes)
            let confirmed = try await store.confirmed(ids: [read.soupEntryId!], in: "S")
            #expect(confirmed[read.soupEntryId!]?["Code"] == 3)
            #expect(confirmed[read.soupEntryId!]?["Name"] == "a")
            #expect(try await names(.exact(path: "Code", matchKey: 3)) == ["a"])
            // Gone: refused, whatever it replaced.
            var missing = saved
            missing[SyncField.soupEntryId] = 99
            changes = SoupChangeSet()
            changes.save(missing, in: "S", replacing: read)
            await #expect(throws: SoupStoreError.unknownEntry(soup: "S", id: 99)) { try await store.apply(changes) }
        }
    }
}
