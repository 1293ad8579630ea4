import Foundation
import JSON
import Testing

@testable import Soups

@Suite struct PatchTests {
    /// Id after a json1 index and another column: a tracked filter's position counts columns only.
    static let spec = soup("Accounts", ("Code", .json1), ("Name", .string), ("Id", .string), (SyncField.local, .string),
                           ("LastModifiedDate", .string))

    /// A journal entry of the sync up that wrote `entry`.
    static func journaled(_ entry: JSONObject) -> SyncJournalEntry {
        SyncJournalEntry(syncName: "up", soupName: "Accounts", entryId: entry.soupEntryId!, operation: .create, objectType: "Account",
                         recordId: nil, payload: [:], sentAt: 1)
    }

    /// Entries as a sync up leaves them before saving: created locally, one with an error, nested
    /// and escaped values, a member after the flags.
    static func staged() -> [JSONObject] {
        (0..<3).map { index in
            var object = entry([
                "attributes": ["type": "Account"], "Id": .string("local_\(index)"), "Name": .string(index == 1 ? "Zoë \"quoted\"\n" : "Name \(index)"),
                "Nested": ["list": [1, "a\\b", nil], "empty": [:]], "Code": .integer(Int64(index)), "LastModifiedDate": "2026-01-01T00:00:00.000+0000",
            ])
            object[SyncField.local] = true
            object[SyncField.locallyCreated] = true
            object[SyncField.locallyUpdated] = false
            object[SyncField.locallyDeleted] = false
            if index == 2 { object[SyncField.lastError] = .string(#"{"errorCode":"UNABLE_TO_LOCK_ROW"}"#) }
            object["After"] = .double(1.5)
            return object
        }
    }

    /// A patch leaves each entry as the same changes made to its object and written the usual
    /// way would: members in place, a removed one gone, the missing ones appended; index columns,
    /// `_local` and tracked filters follow; the data fields are recorded as confirmed, and the
    /// values read are those from before.
    @Test func aPatchWritesItsFieldsAsAnObjectWriteWould() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            let stored = try await store.upsert(Self.staged(), into: "Accounts")
            try await store.trackValues(in: "Accounts", path: "Name")
            try await store.trackValues(in: "Accounts", path: "Id")
            let journal = try await store.journal.append(stored.map(Self.journaled))
            var patch = SoupPatch(soup: "Accounts", fields: SyncField.cleanValues.map { ($0.name, $0.value) }
                                      + SyncField.asCreatedValues(dateField: "LastModifiedDate"), valueField: "Id")
            patch.confirming = true
            patch.reading = ["Id", "Name", "Nested", "Missing"]
            patch.settledJournalIds = journal
            patch.entries = stored.map { SoupPatch.Entry(id: $0.soupEntryId!, lastModified: $0[SyncField.soupLastModifiedDate]!.integerValue!,
                                                         value: .string("001P0000000000\($0.soupEntryId!)AAA")) }
            let read = try #require(try await store.patch(patch))

            #expect(read.map { $0[0] } == stored.map { $0["Id"] })
            #expect(read.map { $0[1] } == stored.map { $0["Name"] })
            #expect(read.map { $0[2] } == stored.map { $0["Nested"] })
            #expect(read.allSatisfy { $0[3] == nil })
            let patched = try await allEntries(store, "Accounts")
            let confirmed = try await store.confirmed(ids: ids(patched), in: "Accounts")
            for (before, after) in zip(stored, patched) {
                // The store keeps `_soupEntryId` and `_soupLastModifiedDate` last.
                var expected = before
                expected[SyncField.soupEntryId] = nil
                expected[SyncField.soupLastModifiedDate] = nil
                expected.markClean()
                expected.markAsCreated(dateField: "LastModifiedDate")
                expected["Id"] = .string("001P0000000000\(before.soupEntryId!)AAA")
                expected[SyncField.soupEntryId] = before[SyncField.soupEntryId]
                expected[SyncField.soupLastModifiedDate] = after[SyncField.soupLastModifiedDate]
                #expect(after == expected)
                #expect(Array(after.keys) == Array(expected.keys), "members in place, the new ones last")
                #expect(after[SyncField.soupLastModifiedDate]!.integerValue! >= before[SyncField.soupLastModifiedDate]!.integerValue!)
                #expect(confirmed[after.soupEntryId!] == after.dataFields)
            }
            let newIds = patched.map { $0["Id"]! }
            #expect(try await store.journal.entries(of: "up").isEmpty, "settled in the same transaction")
            #expect(try await store.entries(in: "Accounts", where: "Id", in: newIds).count == 3, "the Id column and its filter")
            #expect(try await store.entries(in: "Accounts", where: "Name", in: ["Name 0"]).count == 1, "the Name filter untouched")
            #expect(try await store.entries(in: "Accounts", where: "Id", in: ["local_0"]).isEmpty)
            #expect(try await store.dirtyEntries(in: "Accounts").isEmpty, "_local cleared")
            #expect(try await store.entries(in: "Accounts", where: SyncField.local, in: [false]).values.joined().count == 3)
            #expect(try await store.entries(in: "Accounts", where: "LastModifiedDate", in: ["2026-01-01T00:00:00.000+0000"]).isEmpty,
                    "a removed field's column emptied")
        }
    }

    /// Nothing is written, the journal entries not settled either, when one entry changed since it
    /// was read or is gone, holds a name written with escapes, or when the soup indexes a path a
    /// patch cannot keep (below a patched field, in full text, the store's own date), or the patch
    /// would leave a column the store derives stale (`__sync_id__`, a flag without `__local__`).
    @Test func aPatchThatCannotApplyWritesNothing() async throws {
        let specs = [Self.spec, soup("Accounts", ("Id.part", .string)), soup("Accounts", ("Id", .fullText)),
                     soup("Accounts", (SyncField.soupLastModifiedDate, .integer))]
        for (index, spec) in specs.enumerated() {
            try await withStore { (store) async throws in
                try await store.registerSoup(spec)
                let stored = try await store.upsert(Self.staged(), into: "Accounts")
                let journal = try await store.journal.append(stored.map(Self.journaled))
                func patch(_ changes: (inout SoupPatch.Entry, Int) -> Void = { _, _ in }) -> SoupPatch {
                    var patch = SoupPatch(soup: "Accounts", fields: SyncField.cleanValues.map { ($0.name, $0.value) }, valueField: "Id")
                    patch.settledJournalIds = journal
                    patch.entries = stored.enumerated().map { index, object in
                        var entry = SoupPatch.Entry(id: object.soupEntryId!, lastModified: object[SyncField.soupLastModifiedDate]!.integerValue!,
                                                    value: "001P00000000001AAA")
                        changes(&entry, index)
                        return entry
                    }
                    return patch
                }
                if index == 0 {
                    #expect(try await store.patch(patch { entry, index in if index == 2 { entry.lastModified -= 1 } }) == nil)
                    #expect(try await store.patch(patch { entry, index in if index == 2 { entry.id = 99 } }) == nil)
                    for field in [(SyncField.soupEntryId, JSONValue.integer(7)), (SyncField.syncId, .integer(7))] {
                        var named = patch()
                        named.fields.append((field.0, field.1))
                        #expect(try await store.patch(named) == nil, "\(field.0)")
                    }
                    var flagOnly = patch()
                    flagOnly.fields = [(SyncField.locallyCreated, true)]
                    #expect(try await store.patch(flagOnly) == nil, "a flag without __local__")
                    var flagSetLocalCleared = patch()
                    flagSetLocalCleared.fields = [(SyncField.local, false), (SyncField.locallyCreated, true)]
                    #expect(try await store.patch(flagSetLocalCleared) == nil, "a flag set with __local__ cleared")
                } else {
                    #expect(try await store.patch(patch()) == nil)
                }
                #expect(try await allEntries(store, "Accounts") == Array(stored), "nothing written")
                #expect(try await store.journal.entries(of: "up").count == 3, "nothing settled")
            }
        }
        // An entry whose text holds a name with escapes (the store wrote `"` as `\"`).
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            var odd = Self.staged()
            odd[1]["Say \"hi\""] = "x"
            let stored = try await store.upsert(odd, into: "Accounts")
            var patch = SoupPatch(soup: "Accounts", fields: SyncField.cleanValues.map { ($0.name, $0.value) }, valueField: "Id")
            patch.entries = stored.map { SoupPatch.Entry(id: $0.soupEntryId!, lastModified: $0[SyncField.soupLastModifiedDate]!.integerValue!, value: "001") }
            #expect(try await store.patch(patch) == nil)
            #expect(try await allEntries(store, "Accounts") == Array(stored))
        }
    }

    /// Flags a SQL write appended after the store's own members (``SoupStore/flagAll(_:in:)``) are
    /// patched where they stand, and the missing ones go before `_soupEntryId`.
    @Test func aPatchFindsMembersWhereverTheyStand() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(Self.spec)
            try await store.upsert([entry(["Name": "plain", "Id": "001P00000000009AAA"])], into: "Accounts")
            _ = try await store.flagAll(SyncField.locallyUpdated, in: "Accounts")
            let flagged = try #require(try await allEntries(store, "Accounts").first)
            #expect(Array(flagged.keys.suffix(2)) != [SyncField.soupEntryId, SyncField.soupLastModifiedDate], "the flags were appended")
            var patch = SoupPatch(soup: "Accounts", fields: SyncField.cleanValues.map { ($0.name, $0.value) }, valueField: "Id")
            patch.entries = [SoupPatch.Entry(id: flagged.soupEntryId!, lastModified: flagged[SyncField.soupLastModifiedDate]!.integerValue!,
                                             value: "001P00000000009AAA")]
            #expect(try await store.patch(patch) != nil)
            let patched = try #require(try await allEntries(store, "Accounts").first)
            #expect(SyncField.flags.allSatisfy { patched[$0] == false } && patched[SyncField.lastError] == .null)
            #expect(patched.keys.filter { $0 == SyncField.local }.count == 1)
            #expect(try await store.dirtyEntries(in: "Accounts").isEmpty)
        }
    }
}
