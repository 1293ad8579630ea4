import Foundation
import JSON
import Testing

@testable import Soups

/// ``SoupStore/confirmCreates(_:in:idField:settling:)`` leaves entries as reading, editing and
/// writing each one back does.
@Suite struct ConfirmCreatesTests {
    static let spec = soup("Accounts", ("Id", .string), ("Name", .string), (SyncField.local, .string),
                           (SyncField.locallyCreated, .integer), ("Description", .fullText))

    static func local(_ name: String, lastError: Bool) -> JSONObject {
        var entry = entry(["attributes": ["type": "Account"], "Id": .string("local_\(name)"), "Name": .string(name),
                           "Description": "full text", "Address": ["city": "Paris", "lines": ["a", "b\u{9}"]], "Active": true,
                           "Score": 1.5, "Note": "é \"quoted\"", SyncField.local: true, SyncField.locallyCreated: true,
                           SyncField.locallyUpdated: false, SyncField.locallyDeleted: false])
        if lastError { entry[SyncField.lastError] = .string(#"{"errorCode":"UNABLE_TO_LOCK_ROW"}"#) }
        return entry
    }

    @Test func entriesComeOutAsTheEntryByEntryPathWritesThem() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let stored = try await store.upsert([Self.local("sql", lastError: true), Self.local("swift", lastError: true),
                                                 Self.local("sql2", lastError: false), Self.local("swift2", lastError: false)], into: "Accounts")
            try await store.trackValues(in: "Accounts", path: "Id")
            let journal = try await store.appendToJournal(stored.map { entry in
                SyncJournalEntry(syncName: "up", soupName: "Accounts", entryId: entry.soupEntryId!, operation: .create, objectType: "Account",
                                 recordId: nil, payload: ["Name": entry["Name"]!], sentAt: 1, serverSentAt: 1, settledBy: 2)
            })
            let ids = ["001000000000001AAA", "001000000000002AAA", "001000000000003AAA", "001000000000004AAA"]
            // Entries 0 and 2 through SQL, 1 and 3 read, edited and written back.
            let written = try #require(try await store.confirmCreates(
                [0, 2].map { SoupStore.CreatedRecord(entryId: stored[$0].soupEntryId!, lastModified: stored[$0][SyncField.soupLastModifiedDate]!.integerValue!, id: ids[$0]) },
                in: "Accounts", idField: "Id", settling: [journal[0], journal[2]]))
            var changes = SoupChangeSet()
            for index in [1, 3] {
                var entry = stored[index]
                entry["Id"] = .string(ids[index])
                entry.markClean()
                changes.save(entry, in: "Accounts", confirmed: true)
            }
            changes.settledJournalIds = [journal[1], journal[3]]
            try await store.apply(changes)

            #expect(written.map(\.previousId) == ["local_sql", "local_sql2"])
            let after = try await store.retrieve(ids: stored.map { $0.soupEntryId! }, from: "Accounts")
            let confirmed = try await store.confirmed(ids: stored.map { $0.soupEntryId! }, in: "Accounts")
            for (sql, swift) in [(0, 1), (2, 3)] {
                #expect(after[sql].keys == after[swift].keys, "the same members in the same order")
                for key in after[sql].keys where !["Id", "Name", SyncField.soupEntryId, SyncField.soupLastModifiedDate, SyncField.soupCreatedDate].contains(key) {
                    #expect(after[sql][key] == after[swift][key], "\(key)")
                }
                #expect(after[sql]["Id"] == .string(ids[sql]) && !after[sql].isDirty)
                #expect(confirmed[stored[sql].soupEntryId!] == after[sql].dataFields)
                #expect(try JSONParser.parse(written[sql / 2].confirmed).value.objectValue == after[sql].dataFields)
                #expect(after[sql][SyncField.soupLastModifiedDate]!.integerValue! >= stored[sql][SyncField.soupLastModifiedDate]!.integerValue!)
            }
            // The index columns and the tracked filter learned the new ids and the cleared flags.
            #expect(try await store.entries(in: "Accounts", where: "Id", in: [.string(ids[0]), .string(ids[2])]).count == 2)
            #expect(try await store.entries(in: "Accounts", where: SyncField.local, in: [true]).isEmpty)
            #expect(try await store.entries(in: "Accounts", where: SyncField.locallyCreated, in: [false]).values.joined().count == 4)
            #expect(try await store.dirtyEntries(in: "Accounts").isEmpty)
            #expect(try await store.journal(of: "up").isEmpty)
        }
    }

    @Test func anEntryChangedSinceItWasReadChangesNothing() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let stored = try await store.upsert([Self.local("a", lastError: false), Self.local("b", lastError: false)], into: "Accounts")
            let journal = try await store.appendToJournal(stored.map { entry in
                SyncJournalEntry(syncName: "up", soupName: "Accounts", entryId: entry.soupEntryId!, operation: .create, objectType: "Account",
                                 recordId: nil, payload: [:], sentAt: 1, serverSentAt: 1, settledBy: 2)
            })
            let records = stored.enumerated().map { index, entry in
                SoupStore.CreatedRecord(entryId: entry.soupEntryId!, lastModified: entry[SyncField.soupLastModifiedDate]!.integerValue! - (index == 1 ? 1 : 0),
                                        id: "00100000000000\(index)AAA")
            }
            #expect(try await store.confirmCreates(records, in: "Accounts", idField: "Id", settling: journal) == nil)
            #expect(try await store.dirtyEntries(in: "Accounts").count == 2, "the first entry's write was rolled back with the rest")
            #expect(try await store.journal(of: "up").count == 2)
        }
    }

    @Test func whatTheSQLCannotWriteIsLeftToTheEntryPath() async throws {
        try await withStore { (store) async throws in
            #expect(SoupStore.canConfirmCreate(of: Self.local("a", lastError: true), idField: "Id"))
            var custom = Self.local("a", lastError: false)
            custom["__custom__"] = true
            #expect(!SoupStore.canConfirmCreate(of: custom, idField: "Id"), "a member the store does not know outside the data fields")
            #expect(!SoupStore.canConfirmCreate(of: Self.local("a", lastError: false), idField: "Ext.Id"))
            #expect(!SoupStore.canConfirmCreate(of: Self.local("a", lastError: false), idField: SyncField.local))
            try await store.registerSoup(soup("Texts", ("Id", .string), (SyncField.locallyCreated, .fullText)))
            let stored = try await store.upsert([Self.local("t", lastError: false)], into: "Texts")
            let record = SoupStore.CreatedRecord(entryId: stored[0].soupEntryId!, lastModified: stored[0][SyncField.soupLastModifiedDate]!.integerValue!,
                                                 id: "001000000000009AAA")
            #expect(try await store.confirmCreates([record], in: "Texts", idField: "Id", settling: []) == nil, "a flag indexed for full-text search")
            #expect(try await store.dirtyEntries(in: "Texts").count == 1)
        }
    }
}
