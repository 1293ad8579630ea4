import Foundation
import GRDB
import JSON
import Testing

@testable import Soups

/// ``SyncedRecords``: records merged from their bytes store what merging the entries built from
/// them stores.
@Suite struct SyncedRecordsTests {
    /// A page of records as an org might write it: spacing, escapes, nested objects, numbers of
    /// every shape, and records the copy declines (a repeated name, a name the store sets, a
    /// non-ASCII name), which are built instead.
    static let page = """
        {"totalSize":9,"done":true,"records":[
          {"attributes":{"type":"Account","url":"/a/001A"},"Id":"001A","Name":"Acme","NumberOfEmployees":12,"Score__c":1.50,
           "Owner":{"attributes":{"type":"User"},"Name":"Ann"},"Description":"big \\"client\\"\\u00e9","Tags":["a","b"]},
          { "attributes" : { "type" : "Account" } , "Id" : "001B" , "Name" : "Bolt é", "NumberOfEmployees": -0, "Score__c": 1e2 },
          {"attributes":{"type":"Account"},"Id":"001C","Name":"Twice","Name":"Twice 2"},
          {"attributes":{"type":"Account"},"Id":"001D","__local__":true,"Name":"Claims to be local"},
          {"attributes":{"type":"Account"},"Id":"001E","Näme":"non-ASCII name"},
          {"Id":"001F"},
          {},
          {"attributes":{"type":"Contact"},"Id":"003A","Name":"Other type","Owner":null},
          {"attributes":{"type":"Account"},"Id":"001G","Name":"Signed zero","Score__c":-0.0},
          {"attributes":{"type":"Account"},"Id":"001A","Name":"Acme again","Description":"still a client"}
        ]}
        """

    static let spec = soup("Accounts", ("Id", .string), ("Name", .string), ("attributes.type", .string), ("__local__", .string),
                           ("Owner.Name", .string), ("NumberOfEmployees", .integer), ("Score__c", .floating), ("Description", .fullText),
                           ("Tags", .json1))

    private func records() throws -> RawJSONObjects {
        let bytes = Array(Self.page.utf8)
        return RawJSONObjects(bytes: bytes, ranges: try #require(try JSONParser.members(of: bytes, elementsOf: "records").elements))
    }

    /// Every column of every row of `soup`'s table, `_soupLastModifiedDate` and the dates left out.
    private func rows(_ store: SoupStore, _ soup: String) async throws -> [[String]] {
        try await store.pool.read { db in
            let table = try SoupTable.load(db, soupName: soup)
            let columns = ["id", "json_remove(soup, '$._soupLastModifiedDate')", "_local", "_syncId", "_confirmed"] + table.columns.compactMap { $0 }
            return try Row.fetchAll(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table.tableName) ORDER BY id").map { row in
                columns.indices.map { "\(row[$0] as DatabaseValue)" }
            }
        }
    }

    @Test func recordsMergedFromTheirBytesStoreWhatTheirBuiltEntriesStore() async throws {
        try await withStore { store in
            try await store.registerSoup(Self.spec)
            var copySpec = Self.spec
            copySpec.name = "Copies"
            try await store.registerSoup(copySpec)
            let records = try records()
            // Twice: first into empty soups, then over what the first merge stored.
            for round in 0..<2 {
                var built = SoupChangeSet()
                built.merge(try records.objects().map { $0.synced(syncId: 7) }, into: "Accounts", matching: "Id")
                var copied = SoupChangeSet()
                copied.merge(SyncedRecords(records, syncId: 7), into: "Copies", matching: "Id")
                let builtCounts = try await store.apply(built).merges
                let copiedCounts = try await store.apply(copied).merges
                #expect(builtCounts == copiedCounts, "round \(round)")
                #expect(try await rows(store, "Copies") == (try await rows(store, "Accounts")), "round \(round)")
            }
            // The full-text index follows the copies too.
            let found = try await store.query(QuerySpec(soupName: "Copies", kind: .match(path: "Description", matchKey: "client")))
            #expect(found.map { $0["Id"] } == ["001A"])
        }
    }

    /// A record that is not valid JSON fails the write, naming the soup and its place in its page.
    @Test func aRecordThatIsNotJSONFailsNamingTheSoup() async throws {
        try await withStore { store in
            try await store.registerSoup(Self.spec)
            let bytes = Array(#"{"records":[{"Id":"001A"},{"Id":"001B","Name":tru}]}"#.utf8)
            let records = RawJSONObjects(bytes: bytes, ranges: try #require(try JSONParser.members(of: bytes, elementsOf: "records").elements))
            var changes = SoupChangeSet()
            changes.merge(SyncedRecords(records, syncId: 7), into: "Accounts", matching: "Id")
            await #expect(throws: SoupStoreError.invalidRecord(soup: "Accounts", reason: "line 1, column 47: invalid literal, expected 'true'")) {
                try await store.apply(changes)
            }
            #expect(try await allEntries(store, "Accounts").isEmpty)
        }
    }

    /// The copy declines what it cannot write as the built entry is written; the rest it copies.
    @Test func onlyRecordsTheCopyCannotWriteAlikeAreBuilt() throws {
        let records = try records()
        let table = SoupTable(spec: Self.spec, soupId: 1)
        let form = SyncedRecordForm(table: table, syncId: 7)
        let copiedPositions = try records.ranges.indices.filter { try PreparedEntry(record: records.ranges[$0], in: records.bytes, form: form) != nil }
        #expect(copiedPositions == [0, 1, 5, 6, 7, 9])
        for position in copiedPositions {
            let copy = try #require(try PreparedEntry(record: records.ranges[position], in: records.bytes, form: form))
            let built = PreparedEntry(try records.object(at: position).synced(syncId: 7), table: table, confirming: true)
            #expect(copy.json == built.json)
            #expect(copy.confirmed == built.confirmed)
            #expect(copy.columnValues == built.columnValues)
            #expect(try copy.object() == built.entry)
        }
    }
}
