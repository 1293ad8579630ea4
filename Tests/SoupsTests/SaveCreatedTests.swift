import Foundation
import GRDB
import JSON
import Synchronization
import Testing

@testable import Soups

/// Saving confirmed creates by editing stored JSON as text leaves every entry, index column,
/// confirmed value and journal entry as parsing the entry, setting its id, marking it clean and
/// saving it does; an entry it cannot edit so writes nothing.
@Suite struct SaveCreatedTests {
    /// Indexes over the id, the flags (one as a json1 expression), a nested path and a data field.
    static func spec(_ name: String) -> SoupSpec {
        soup(name, ("Id", .string), ("__local__", .string), ("__locally_created__", .integer), ("__locally_deleted__", .json1),
             ("attributes.type", .string), ("Name", .string), ("__last_error__", .string))
    }

    /// Entries as staging and marking leave them, in the shapes a sync up meets.
    static let entries: [JSONObject] = [
        entry(["attributes": ["type": "Account"], "Name": "Quote \" and é", "Id": "local_1", "Amount": 1.5, "Tags": ["a", ["b": nil]],
               "__local__": true, "__locally_created__": true, "__locally_updated__": false, "__locally_deleted__": false]),
        // No id and no __last_error__ member: both added, after the others.
        entry(["attributes": ["type": "Account"], "Name": "No id", "__local__": true, "__locally_created__": true]),
        // A failed earlier attempt; flags in other accepted shapes; the id null.
        entry(["Name": "Retried", "Id": nil, "__last_error__": "{\"errorCode\":\"X\"}", "__local__": "true", "__locally_created__": 1,
               "Empty": [:]]),
    ]

    static let newIds = ["001000000000001AAA", "001000000000002AAA", "001000000000003AAA"]

    @Test func editedTextMatchesTheParsedSave() async throws {
        try await withStore { store in
            for name in ["Parsed", "Edited"] { try await store.registerSoup(Self.spec(name)) }
            let parsed = try await store.upsert(Self.entries, into: "Parsed")
            let edited = try await store.upsert(Self.entries, into: "Edited")
            let journal = try await store.appendToJournal(edited.map {
                SyncJournalEntry(syncName: "up", soupName: "Edited", entryId: $0.soupEntryId!, operation: .create, objectType: "Account",
                                 recordId: nil, payload: [:], sentAt: 1, serverSentAt: nil, settledBy: nil, link: nil, bulkJobId: nil)
            })

            var changes = SoupChangeSet()
            changes.confirmEverySave = ["Parsed"]
            for (index, stored) in parsed.enumerated() {
                var saved = stored
                saved["Id"] = .string(Self.newIds[index])
                saved.markClean()
                changes.save(saved, in: "Parsed", replacing: stored)
            }
            try await store.apply(changes)

            let seen = Mutex<[JSONObject]>([])
            let ids = edited.map { $0.soupEntryId! }
            let saved = try await store.saveCreated(
                ids, in: "Edited", idField: "Id", reading: EntryMemberSelection(["Id", "attributes"] + SyncField.flags, dataFields: true),
                settling: journal
            ) { entry in
                seen.withLock { $0.append(entry) }
                return (Self.newIds[Int(entry.soupEntryId! - ids[0])], entry.soupEntryId!)
            }
            #expect(saved == ids)
            // The check saw the members selected, as stored, with the entry's _soupEntryId.
            let members = seen.withLock { $0 }
            #expect(members.map(\.keys) == [
                ["_soupEntryId", "attributes", "Name", "Id", "Amount", "Tags", "__local__", "__locally_created__", "__locally_updated__",
                 "__locally_deleted__"],
                ["_soupEntryId", "attributes", "Name", "__local__", "__locally_created__"],
                ["_soupEntryId", "Name", "Id", "__local__", "__locally_created__", "Empty"],
            ])
            #expect(members[0]["Name"] == "Quote \" and é" && members[2]["__locally_created__"] == true)

            // Stored JSON (key order included, the save's own date aside), every column and the
            // confirmed values are the same.
            let parsedRows = try await rows(store, "Parsed")
            let editedRows = try await rows(store, "Edited")
            #expect(parsedRows == editedRows)
            #expect(editedRows.count == 3)
            #expect(try await store.retrieve(ids: ids, from: "Edited").map { $0.keys } == [
                ["attributes", "Name", "Id", "Amount", "Tags", "__local__", "__locally_created__", "__locally_updated__", "__locally_deleted__",
                 "__last_error__", "_soupEntryId", "_soupLastModifiedDate"],
                ["attributes", "Name", "__local__", "__locally_created__", "Id", "__locally_updated__", "__locally_deleted__", "__last_error__",
                 "_soupEntryId", "_soupLastModifiedDate"],
                ["Name", "Id", "__last_error__", "__local__", "__locally_created__", "Empty", "__locally_updated__", "__locally_deleted__",
                 "_soupEntryId", "_soupLastModifiedDate"],
            ])
            #expect(try await store.count(QuerySpec(soupName: "Edited", kind: .exact(path: "Id", matchKey: .string(Self.newIds[1])))) == 1)
            #expect(try await store.dirtyEntryIds(in: "Edited").isEmpty)
            #expect(try await store.journal(of: "up").isEmpty)
        }
    }

    @Test func anEntryRefusedOrMissingWritesNothing() async throws {
        try await withStore { store in
            try await store.registerSoup(Self.spec("Accounts"))
            let stored = try await store.upsert(Self.entries, into: "Accounts")
            let ids = stored.map { $0.soupEntryId! }
            let journal = try await store.appendToJournal(ids.map {
                SyncJournalEntry(syncName: "up", soupName: "Accounts", entryId: $0, operation: .create, objectType: "Account",
                                 recordId: nil, payload: [:], sentAt: 1, serverSentAt: nil, settledBy: nil, link: nil, bulkJobId: nil)
            })
            let before = try await rows(store, "Accounts", dates: true)
            let refused = try await store.saveCreated(ids, in: "Accounts", idField: "Id", reading: EntryMemberSelection(["Name"]),
                                                      settling: journal) { entry -> (id: String, saved: Int)? in
                entry["Name"] == "Retried" ? nil : ("001000000000009AAA", 0)
            }
            #expect(refused == nil)
            let missing = try await store.saveCreated(ids + [999], in: "Accounts", idField: "Id", reading: EntryMemberSelection([]),
                                                      settling: journal) { _ in ("001000000000009AAA", 0) }
            #expect(missing == nil)
            #expect(try await rows(store, "Accounts", dates: true) == before)
            #expect(try await store.journal(of: "up").count == 3)
            #expect(try await store.dirtyEntryIds(in: "Accounts") == ids)
        }
    }

    @Test func aSoupWithAFullTextOrNestedIndexOverAChangedMemberTakesTheGeneralPath() async throws {
        try await withStore { store in
            try await store.registerSoup(soup("Text", ("Name", .fullText)))
            try await store.registerSoup(soup("Nested", ("Id.x", .string)))
            for name in ["Text", "Nested"] {
                let ids = try await store.upsert([Self.entries[1]], into: name).map { $0.soupEntryId! }
                let saved = try await store.saveCreated(ids, in: name, idField: "Id", reading: EntryMemberSelection([]), settling: []) { _ in
                    ("001000000000009AAA", 0)
                }
                #expect(saved == nil, "\(name)")
                #expect(try await store.dirtyEntryIds(in: name) == ids)
            }
        }
    }

    /// Every row of a soup's table, each column in order; without `dates`, the dates of the
    /// entry's creation and last write are left out, of the stored JSON too.
    private func rows(_ store: SoupStore, _ soupName: String, dates: Bool = false) async throws -> [[String]] {
        try await store.pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            return try Row.fetchAll(db, sql: "SELECT * FROM \(table.tableName) ORDER BY id").map { row in
                row.compactMap { name, value -> String? in
                    if !dates && (name == "lastModified" || name == "created") { return nil }
                    guard !dates, name == "soup", let text = String.fromDatabaseValue(value),
                          var object = try? JSONParser.parse(text).objectValue else { return "\(value)" }
                    object[SyncField.soupLastModifiedDate] = nil
                    return "soup=" + JSONValue.object(object).jsonString
                }
            }
        }
    }
}
