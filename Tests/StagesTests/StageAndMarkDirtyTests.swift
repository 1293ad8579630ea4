import Foundation
import JSON
import Soups
import Stages
import Testing

/// The dataset → soup → flags path: `extract.csv`, `stage` and `markDirty` together.
@Suite struct StageAndMarkDirtyTests {
    static let soups = """
        "soups": [
          {"soupName": "AccountSoup", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"},
                                                  {"path": "__local__", "type": "string"}]},
          {"soupName": "ContactSoup", "indexes": [{"path": "Id", "type": "string"}, {"path": "LastName", "type": "string"},
                                                  {"path": "AccountId", "type": "string"}]}
        ]
        """

    func run(_ directory: String, _ stages: String) async throws -> (RunOutcome, SoupStore) {
        let pipeline = try loadPipeline("{ \(Self.soups), \"stages\": \(stages) }", in: directory)
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        return (outcome, try SoupStore.openForReading(path: pipeline.store))
    }

    func entries(_ store: SoupStore, _ soup: String) async throws -> [JSONObject] {
        try await store.entries(in: soup, limit: 1000)
    }

    @Test func stagedRecordsBecomeEntriesMatchedAndMerged() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("Name,Industry\nAcme,Tech\nGlobex,Energy\n", to: "accounts.csv", in: directory)
        let stages = """
            [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name" } ]
            """
        let (first, store) = try await run(directory, stages)
        #expect(first.exitCode == 0)
        #expect(first.report.stages[1].counts == ["read": 2, "created": 2, "updated": 0, "unchanged": 0, "conflicts": 0, "rejected": 0])
        let created = try await entries(store, "AccountSoup")
        #expect(created.map { $0["Name"]?.stringValue ?? "" } == ["Acme", "Globex"])
        #expect(created[0]["Id"]?.stringValue?.hasPrefix("local_") == true)
        #expect(created[0]["attributes"] == ["type": "Account"])
        #expect(created[0][SyncField.local] == false)

        // Same names again with one change: matched and merged, not duplicated; other fields kept.
        try write("Name,Industry,Phone\nAcme,Tech,555\nGlobex,Energy,\n", to: "accounts.csv", in: directory)
        let (second, store2) = try await run(directory, stages)
        #expect(second.report.stages[1].counts["updated"] == 1)
        #expect(second.report.stages[1].counts["unchanged"] == 1)
        let merged = try await entries(store2, "AccountSoup")
        #expect(merged.count == 2)
        #expect(merged[0]["Phone"] == "555")
        #expect(merged[0]["Id"] == created[0]["Id"])
    }

    @Test func aKeyRepeatedInTheNextBatchUpdatesTheEntryWrittenBefore() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Batches hold 5,000 records: row 5,001 repeats row 1's key, row 10,001 repeats row 5,002's.
        var csv = "Name,Industry\n"
        for index in 0..<5000 { csv += "Account \(index),First\n" }
        csv += "Account 0,Second\n"
        for index in 5000..<9999 { csv += "Account \(index),First\n" }
        csv += "Account 5000,Third\n"
        try write(csv, to: "accounts.csv", in: directory)
        let (outcome, store) = try await run(directory, """
            [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name" } ]
            """)
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[1].counts["created"] == 9999)
        #expect(outcome.report.stages[1].counts["updated"] == 2)
        let all = try await store.entries(in: "AccountSoup", limit: 20_000)
        #expect(all.count == 9999, "no duplicate entries")
        #expect(all.first { $0["Name"] == "Account 0" }?["Industry"] == "Second")
        #expect(all.first { $0["Name"] == "Account 5000" }?["Industry"] == "Third")
    }

    @Test func childrenAndParentLinksCarryLocalIds() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("Name\nAcme\n", to: "accounts.csv", in: directory)
        try write("LastName,AccountName\nCoyote,Acme\nRunner,Acme\nNobody,Initech\n", to: "contacts.csv", in: directory)
        let (outcome, store) = try await run(directory, """
            [ { "id": "accounts", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stageAccounts", "type": "stage", "from": "accounts", "soup": "AccountSoup", "matchOn": "Name" },
              { "id": "contacts", "type": "extract.csv", "file": "contacts.csv", "sobjectType": "Contact" },
              { "id": "stageContacts", "type": "stage", "from": "contacts", "after": ["stageAccounts"], "soup": "ContactSoup",
                "matchOn": "LastName", "parent": {"soup": "AccountSoup", "key": "AccountName", "matchOn": "Name", "idField": "AccountId"} } ]
            """)
        #expect(outcome.exitCode == 3)
        let contactsStage = try #require(outcome.report.stages.first { $0.id == "stageContacts" })
        #expect(contactsStage.counts["created"] == 2)
        #expect(contactsStage.counts["rejected"] == 1)
        let account = try #require(try await entries(store, "AccountSoup").first)
        let contacts = try await entries(store, "ContactSoup")
        #expect(contacts.map { $0["AccountId"] } == [account["Id"], account["Id"]])
        #expect(contacts.allSatisfy { $0["AccountName"] == nil })
        // The rejected record is in the stage's rejects file, at the line it starts on in contacts.csv.
        let rejects = try String(contentsOfFile: outcome.report.reportDir + "/rejects/stageContacts.csv", encoding: .utf8)
        #expect(rejects.components(separatedBy: "\r\n") == [
            "line,reason,raw",
            #"4,missing parent: AccountName = Initech,"{""attributes"":{""type"":""Contact"",""line"":4},""LastName"":""Nobody"",""AccountName"":""Initech""}""#,
            "",
        ])
    }

    @Test func nestedChildrenAreStoredInTheirSoup() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { \(Self.soups), "stages": [
                { "id": "source", "type": "test.count", "count": 0 },
                { "id": "stage", "type": "stage", "from": "source", "soup": "AccountSoup", "matchOn": "Id",
                  "children": {"relationship": "Contacts", "soup": "ContactSoup", "parentIdField": "AccountId", "matchOn": "Id"} } ] }
            """, in: directory)
        // Seed the source dataset as extract.soql would leave it: a server record with a subquery result.
        let store = try SoupStore(path: pipeline.store)
        try await store.datasets.begin("source", runId: "seed")
        try await store.datasets.append("source", records: [[
            "attributes": ["type": "Account"], "Id": "001000000000001AAA", "Name": "Acme",
            "Contacts": ["totalSize": 1, "done": true, "records": [["attributes": ["type": "Contact"], "Id": "003000000000001AAA", "LastName": "Coyote"]]],
        ]])
        try await store.datasets.finish("source")
        for soup in pipeline.soups { try await store.registerSoup(soup) }
        try store.close()
        let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(only: ["stage"]), observer: RecordingObserver()).run()
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[0].byObject == ["Account": ["created": 1], "Contact": ["created": 1]])
        let reader = try SoupStore.openForReading(path: pipeline.store)
        let accounts = try await entries(reader, "AccountSoup")
        #expect(accounts.first?["Contacts"] == nil)
        let contacts = try await entries(reader, "ContactSoup")
        #expect(contacts.first?["AccountId"] == "001000000000001AAA")
        #expect(contacts.first?["Id"] == "003000000000001AAA")
    }

    /// Records read from the org (`attributes.url`, as `extract.soql` leaves them) are what the org
    /// holds: `markDirty as: auto` leaves them clean, as does staging with `markDirty: true`, with
    /// or without nested children; an edit after staging is then a local change.
    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func recordsStagedFromTheOrgAreNotLocalChanges(children: Bool, markAsStaged: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nested = children ? #", "children": {"relationship": "Contacts", "soup": "ContactSoup", "parentIdField": "AccountId", "matchOn": "Id"}"# : ""
        let stages = """
            [ { "id": "source", "type": "test.count", "count": 0 },
              { "id": "stage", "type": "stage", "from": "source", "soup": "AccountSoup", "matchOn": "Id", "markDirty": \(markAsStaged)\(nested) },
              { "id": "mark-accounts", "type": "markDirty", "after": ["stage"], "soup": "AccountSoup", "as": "auto" },
              { "id": "mark-contacts", "type": "markDirty", "after": ["stage"], "soup": "ContactSoup", "as": "auto" } ]
            """
        let pipeline = try loadPipeline("{ \(Self.soups), \"stages\": \(stages) }", in: directory)
        let store = try SoupStore(path: pipeline.store)
        try await store.datasets.begin("source", runId: "seed")
        var account: JSONObject = [
            "attributes": ["type": "Account", "url": "/services/data/v62.0/sobjects/Account/001000000000001AAA"],
            "Id": "001000000000001AAA", "Name": "Acme",
        ]
        if children {
            account["Contacts"] = ["totalSize": 1, "done": true, "records": [[
                "attributes": ["type": "Contact", "url": "/services/data/v62.0/sobjects/Contact/003000000000001AAA"],
                "Id": "003000000000001AAA", "LastName": "Coyote", "AccountId": "001000000000001AAA"]]]
        }
        try await store.datasets.append("source", records: [.object(account)])
        try await store.datasets.finish("source")
        for soup in pipeline.soups { try await store.registerSoup(soup) }
        try store.close()
        let only: [String] = markAsStaged ? ["stage"] : ["stage", "mark-accounts", "mark-contacts"]
        let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(only: only), observer: RecordingObserver()).run()
        #expect(outcome.exitCode == 0)
        for stage in outcome.report.stages where stage.id.hasPrefix("mark-") {
            #expect(stage.counts["updated"] == 0 && stage.counts["created"] == 0, "\(stage.id): \(stage.counts)")
        }
        let reader = try SoupStore.openForReading(path: pipeline.store)
        #expect(try await reader.dirtyEntries(in: "AccountSoup").isEmpty)
        #expect(try await reader.dirtyEntries(in: "ContactSoup").isEmpty)
        #expect(try await reader.entries(in: "ContactSoup", limit: 10).count == (children ? 1 : 0))

        let writer = try SoupStore(path: pipeline.store)
        var acme = try #require(try await writer.entries(in: "AccountSoup", limit: 10).first)
        acme["Name"] = "Acme Corporation"
        try await writer.upsert([acme], into: "AccountSoup")
        try writer.close()
        let again = try await PipelineRunner(pipeline: pipeline, options: RunOptions(only: ["mark-accounts"]), observer: RecordingObserver()).run()
        #expect(again.report.stages[0].counts["updated"] == 1, "an edit after staging is a local change")
    }

    @Test func markDirtyModesAndWhere() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("Name,Industry\nAcme,Tech\nGlobex,Energy\nInitech,Banking\n", to: "accounts.csv", in: directory)
        let load = """
            { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
            { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name" }
            """
        let (outcome, store) = try await run(directory, """
            [ \(load),
              { "id": "mark", "type": "markDirty", "after": ["stage"], "soup": "AccountSoup", "where": "Industry IN ('Tech', 'Energy')", "as": "auto" },
              { "id": "delete", "type": "markDirty", "after": ["mark"], "soup": "AccountSoup", "where": "Name = 'globex'", "as": "deleted" } ]
            """)
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[2].counts == ["read": 2, "created": 2, "updated": 0, "deleted": 0, "unchanged": 0])
        #expect(outcome.report.stages[3].counts["deleted"] == 1)
        let entries = try await entries(store, "AccountSoup")
        #expect(entries.map { $0[SyncField.local] } == [true, true, false])
        #expect(entries[1][SyncField.locallyCreated] == true)
        #expect(entries[1][SyncField.locallyDeleted] == true)
        #expect(try await store.dirtyEntries(in: "AccountSoup").count == 2)

        // Server ids: unchanged since the org confirmed them → clean; edited → updated.
        let writer = try SoupStore(path: store.path)
        var acme = entries[0]
        acme["Id"] = "001000000000001AAA"
        acme.markClean()
        var initech = entries[2]
        initech["Id"] = "001000000000003AAA"
        let saved = try await writer.upsert([acme, initech], into: "AccountSoup")
        try await writer.setConfirmed([saved[0].soupEntryId!: saved[0], saved[1].soupEntryId!: saved[1]], in: "AccountSoup")
        var edited = saved[1]
        edited["Industry"] = "Finance"
        try await writer.upsert([edited], into: "AccountSoup")
        try writer.close()
        let (again, reread) = try await run(directory, """
            [ { "id": "auto", "type": "markDirty", "soup": "AccountSoup", "where": "Id LIKE '001%'" } ]
            """)
        #expect(again.report.stages[0].counts == ["read": 2, "created": 0, "updated": 1, "deleted": 0, "unchanged": 1])
        let after = try await self.entries(reread, "AccountSoup")
        #expect(after.first { $0["Name"] == "Initech" }?[SyncField.locallyUpdated] == true)
        #expect(after.first { $0["Name"] == "Acme" }?[SyncField.local] == false)
    }

    /// `markDirty: true` on `stage` flags each entry a record lands on as `markDirty` `as: auto`
    /// would, in the staging write: new and still-local entries created, entries with a server id
    /// updated only when their values differ from what the org confirmed, nothing flagged twice.
    @Test func stagingWithMarkDirtyFlagsWhatItWritesAsAutoWould() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var storePath = ""
        func stage(_ csv: String, marking: Bool, mergeMode: String = "OVERWRITE") async throws -> (RunOutcome, [String: JSONObject]) {
            try write(csv, to: "accounts.csv", in: directory)
            let (outcome, store) = try await run(directory, """
                [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                  { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name",
                    "mergeMode": "\(mergeMode)", "markDirty": \(marking) } ]
                """)
            #expect(outcome.exitCode == (mergeMode == "OVERWRITE" ? 0 : 3), "conflicts make a partial run")
            storePath = store.path
            let stored = try await self.entries(store, "AccountSoup")
            return (outcome, Dictionary(stored.map { ($0["Name"]!.stringValue!, $0) }, uniquingKeysWith: { $1 }))
        }
        func flags(_ entry: JSONObject?) -> [Bool] { SyncField.flags.map { entry?[$0]?.isTruthy ?? false } }
        let clean = [false, false, false, false], created = [true, true, false, false], updated = [true, false, true, false]

        // Staged without marking, then two of them given server ids the org confirmed.
        let (_, first) = try await stage("Name,Industry\nAcme,Tech\nGlobex,Energy\nInitech,Banking\n", marking: false)
        #expect(first.values.allSatisfy { flags($0) == clean })
        let writer = try SoupStore(path: storePath)
        var synced: [JSONObject] = []
        for (name, id) in [("Acme", "001000000000001AAA"), ("Initech", "001000000000003AAA")] {
            var entry = try #require(first[name])
            entry["Id"] = .string(id)
            synced.append(entry)
        }
        let saved = try await writer.upsert(synced, into: "AccountSoup")
        try await writer.setConfirmed(Dictionary(saved.map { ($0.soupEntryId!, $0) }, uniquingKeysWith: { $1 }), in: "AccountSoup")
        try writer.close()

        // Acme as confirmed: left clean; Globex unchanged but still local: created; Initech
        // changed: updated; Hooli new: created.
        let csv = "Name,Industry\nAcme,Tech\nGlobex,Energy\nInitech,Finance\nHooli,Tech\n"
        let (marked, entries) = try await stage(csv, marking: true)
        #expect(marked.report.stages[1].counts == ["read": 4, "created": 1, "updated": 1, "unchanged": 2, "conflicts": 0, "rejected": 0])
        #expect(flags(entries["Acme"]) == clean)
        #expect(flags(entries["Globex"]) == created)
        #expect(flags(entries["Initech"]) == updated)
        #expect(flags(entries["Hooli"]) == created)
        #expect(entries["Globex"]?[SyncField.soupEntryId] == first["Globex"]?[SyncField.soupEntryId], "matched, not duplicated")

        // Again: nothing more to flag, and nothing written.
        let (again, after) = try await stage(csv, marking: true)
        #expect(again.report.stages[1].counts["unchanged"] == 4)
        for name in ["Acme", "Globex", "Initech", "Hooli"] {
            #expect(after[name]?[SyncField.soupLastModifiedDate] == entries[name]?[SyncField.soupLastModifiedDate], "\(name) not rewritten")
        }

        // LEAVE_IF_CHANGED: the dirty entries are conflicts, left as they are.
        let (leave, kept) = try await stage("Name,Industry\nAcme,Retail\nGlobex,Retail\nInitech,Retail\nHooli,Retail\n",
                                            marking: true, mergeMode: "LEAVE_IF_CHANGED")
        #expect(leave.report.stages[1].counts["conflicts"] == 3 && leave.report.stages[1].counts["updated"] == 1)
        #expect(flags(kept["Acme"]) == updated && kept["Acme"]?["Industry"] == "Retail")
        #expect(kept["Globex"]?["Industry"] == "Energy" && flags(kept["Globex"]) == created)

        // A new entry whose record carries a server id exists at the org: updated, never created.
        let (_, withIds) = try await stage("Id,Name,Industry\n001000000000009AAA,Umbrella,Pharma\n", marking: true)
        #expect(flags(withIds["Umbrella"]) == updated)
    }

    /// Records sharing a key in one batch land on one entry, the later values winning, as records
    /// in later batches do: a key repeated in a file is never two entries (two creates).
    @Test(arguments: [false, true])
    func recordsSharingAKeyInOneBatchLandOnOneEntry(marking: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stages = """
            [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name", "markDirty": \(marking) } ]
            """
        try write("Name,Industry,Phone\nAcme,Tech,\nAcme,Energy,555\nGlobex,Energy,\nAcme,,\n", to: "accounts.csv", in: directory)
        let (first, store) = try await run(directory, stages)
        #expect(first.report.stages[1].counts == ["read": 4, "created": 2, "updated": 1, "unchanged": 1, "conflicts": 0, "rejected": 0])
        let entries = try await entries(store, "AccountSoup")
        #expect(entries.map { $0["Name"] } == ["Acme", "Globex"])
        #expect(entries[0]["Industry"] == "Energy" && entries[0]["Phone"] == "555")
        #expect(entries.allSatisfy { $0.isDirty == marking })

        // A stored entry twice in one batch: both records merged into it, in order.
        try write("Name,Industry\nGlobex,Retail\nGlobex,Mining\n", to: "accounts.csv", in: directory)
        let (second, again) = try await run(directory, stages)
        #expect(second.report.stages[1].counts["updated"] == 2)
        let globex = try #require(try await self.entries(again, "AccountSoup").first { $0["Name"] == "Globex" })
        #expect(globex["Industry"] == "Mining")
    }

    /// With `markDirty` and LEAVE_IF_CHANGED, an entry the stage flagged itself (a key repeated in
    /// a later batch) takes the later record; an entry dirty before the run is still a conflict.
    @Test func markingWithLeaveIfChangedKeepsOnlyEarlierLocalChanges() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func stage(_ csv: String) async throws -> (RunOutcome, SoupStore) {
            try write(csv, to: "accounts.csv", in: directory)
            return try await run(directory, """
                [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                  { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name",
                    "mergeMode": "LEAVE_IF_CHANGED", "markDirty": true } ]
                """)
        }
        _ = try await stage("Name,Industry\nEdited,Old\n")
        // The first batch holds 1,000 records: the last row repeats the second's key in a later one.
        var csv = "Name,Industry\nEdited,New\n"
        for index in 0..<1200 { csv += "Account \(index),First\n" }
        csv += "Account 0,Second\n"
        let (outcome, store) = try await stage(csv)
        #expect(outcome.report.stages[1].counts["conflicts"] == 1)
        #expect(outcome.report.stages[1].counts["created"] == 1200 && outcome.report.stages[1].counts["updated"] == 1)
        let all = try await store.entries(in: "AccountSoup", limit: 2000)
        #expect(all.count == 1201)
        #expect(all.first { $0["Name"] == "Account 0" }?["Industry"] == "Second")
        #expect(all.first { $0["Name"] == "Edited" }?["Industry"] == "Old")
        #expect(all.allSatisfy { $0[SyncField.locallyCreated] == true })
    }

    /// Runs a `stage` (its JSON after `"from": "source"`) over records seeded as an extract would
    /// leave them, then any `markDirty` stages of `extra`; returns the outcome and the soup's entries.
    func stageSeeded(_ records: [JSONObject], _ stage: String, extra: String = "", in directory: String) async throws -> (RunOutcome, [JSONObject], store: String) {
        let pipeline = try loadPipeline("""
            { \(Self.soups), "stages": [
                { "id": "source", "type": "test.count", "count": 0 },
                { "id": "stage", "type": "stage", "from": "source", \(stage) }\(extra) ] }
            """, in: directory)
        let store = try SoupStore(path: pipeline.store)
        try await store.datasets.begin("source", runId: UUID().uuidString)
        try await store.datasets.append("source", records: records.map(JSONValue.object))
        try await store.datasets.finish("source")
        for soup in pipeline.soups { try await store.registerSoup(soup) }
        try store.close()
        let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(only: pipeline.stages.map(\.id).filter { $0 != "source" }),
                                               observer: RecordingObserver()).run()
        return (outcome, try await entries(try SoupStore.openForReading(path: pipeline.store), "AccountSoup"), pipeline.store)
    }

    /// An empty or null key matches no other record: records with `"Id": ""` or `null` are entries
    /// of their own, each with a local id; and an empty `Id` never takes a stored entry's id away.
    @Test func emptyKeysMakeEntriesOfTheirOwnAndNeverClearAnId() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, entries, _) = try await stageSeeded([
            ["attributes": ["type": "Account"], "Id": "", "Name": "A"], ["attributes": ["type": "Account"], "Id": "", "Name": "B"],
            ["attributes": ["type": "Account"], "Id": "001000000000001AAA", "Name": "C"],
            ["attributes": ["type": "Account"], "Id": .null, "Name": "D"], ["attributes": ["type": "Account"], "Id": .null, "Name": "E"],
        ], #""soup": "AccountSoup", "matchOn": "Id", "markDirty": true"#, in: directory)
        #expect(outcome.report.stages[0].counts["created"] == 5, "\(outcome.report.stages[0].counts)")
        #expect(entries.map { $0["Name"] } == ["A", "B", "C", "D", "E"])
        #expect(entries[0]["Id"]?.stringValue?.hasPrefix("local_") == true && entries[1]["Id"] != entries[0]["Id"])
        let (_, again, _) = try await stageSeeded([["attributes": ["type": "Account"], "Id": "", "Name": "C", "Industry": "Tech"]],
                                               #""soup": "AccountSoup", "matchOn": "Name""#, in: directory)
        let c = try #require(again.first { $0["Name"] == "C" })
        #expect(c["Id"] == "001000000000001AAA" && c["Industry"] == "Tech")
        // An empty name matches no stored entry either, in a later run as in the same batch.
        for _ in 0..<2 {
            _ = try await stageSeeded([["attributes": ["type": "Account"], "Name": ""]], #""soup": "AccountSoup", "matchOn": "Name""#, in: directory)
        }
        let (_, blanks, _) = try await stageSeeded([], #""soup": "AccountSoup", "matchOn": "Name""#, in: directory)
        #expect(blanks.filter { $0["Name"] == "" }.count == 2)
    }

    /// An org record and a local one for the same key in one batch: the local one is compared with
    /// what the org returned — flagged when it changes it, clean when it does not; an unchanged
    /// org record confirms a stored entry that had no confirmed values.
    @Test func aLocalRecordAfterAnOrgRecordIsComparedWithTheOrgs() async throws {
        let org: JSONObject = ["attributes": ["type": "Account", "url": "/services/data/v62.0/sobjects/Account/001000000000001AAA"],
                               "Id": "001000000000001AAA", "Name": "Acme"]
        for (local, dirty) in [("Acme Corp", true), ("Acme", false)] {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (_, entries, _) = try await stageSeeded([org, ["attributes": ["type": "Account"], "Id": "001000000000001AAA", "Name": .string(local)]],
                                                     #""soup": "AccountSoup", "matchOn": "Id", "markDirty": true"#, in: directory)
            #expect(entries.count == 1 && entries[0]["Name"] == .string(local))
            #expect(entries[0][SyncField.locallyUpdated]?.isTruthy == dirty, "\(local)")
        }
        // A stored entry: the org's record then a local one leaving it as the org has it — clean,
        // and what the org returned is what is confirmed.
        do {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            _ = try await stageSeeded([["attributes": ["type": "Account"], "Id": "001000000000001AAA", "Name": "Old"]],
                                      #""soup": "AccountSoup", "matchOn": "Id""#, in: directory)
            let (_, entries, store) = try await stageSeeded([org, ["attributes": ["type": "Account"], "Id": "001000000000001AAA", "Name": "Acme"]],
                                                            #""soup": "AccountSoup", "matchOn": "Id", "markDirty": true"#, in: directory)
            #expect(entries.count == 1 && !entries[0].isDirty)
            let reader = try SoupStore.openForReading(path: store)
            let confirmed = try await reader.confirmed(ids: [try #require(entries[0].soupEntryId)], in: "AccountSoup")
            #expect(confirmed.values.first?["Name"] == "Acme")
        }
        // A stored entry nobody confirmed; the org returns it unchanged: `as: auto` then leaves it clean.
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await stageSeeded([["attributes": ["type": "Account"], "Id": "001000000000001AAA", "Name": "Acme"]],
                                  #""soup": "AccountSoup", "matchOn": "Id""#, in: directory)
        let (outcome, entries, _) = try await stageSeeded([org], #""soup": "AccountSoup", "matchOn": "Id""#, extra: """
            , { "id": "mark", "type": "markDirty", "after": ["stage"], "soup": "AccountSoup", "as": "auto" }
            """, in: directory)
        #expect(outcome.report.stages[0].counts["unchanged"] == 1)
        #expect(outcome.report.stages[1].counts["unchanged"] == 1 && outcome.report.stages[1].counts["updated"] == 0)
        #expect(!entries[0].isDirty)
    }

    /// A record that gives a local entry its server id says the record exists in the org: the
    /// entry is not flagged created (a sync up would make it twice), within a batch or across runs.
    @Test func aServerIdForALocalEntryMeansUpdatedNotCreated() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stage = #""soup": "AccountSoup", "matchOn": "Name", "markDirty": true"#
        let (_, entries, _) = try await stageSeeded([["attributes": ["type": "Account"], "Name": "Zed"],
                                                  ["attributes": ["type": "Account"], "Name": "Zed", "Id": "001000000000026AAA"]],
                                                 stage, in: directory)
        #expect(entries.count == 1 && entries[0]["Id"] == "001000000000026AAA")
        #expect(entries[0][SyncField.locallyCreated] == false && entries[0][SyncField.locallyUpdated] == true)
        // Across runs: flagged created by the first, given its server id by the second.
        let (_, first, _) = try await stageSeeded([["attributes": ["type": "Account"], "Name": "Yan"]], stage, in: directory)
        #expect(first.first { $0["Name"] == "Yan" }?[SyncField.locallyCreated] == true)
        let (_, second, _) = try await stageSeeded([["attributes": ["type": "Account"], "Name": "Yan", "Id": "001000000000025AAA"]], stage, in: directory)
        let yan = try #require(second.first { $0["Name"] == "Yan" })
        #expect(yan["Id"] == "001000000000025AAA" && yan[SyncField.locallyCreated] == false && yan[SyncField.locallyUpdated] == true)
        // Created and deleted locally: it keeps both flags (removed here, never sent as a delete).
        _ = try await stageSeeded([["attributes": ["type": "Account"], "Name": "Xen"]], stage, extra: """
            , { "id": "gone", "type": "markDirty", "after": ["stage"], "soup": "AccountSoup", "where": "Name = 'Xen'", "as": "deleted" }
            """, in: directory)
        let (_, third, _) = try await stageSeeded([["attributes": ["type": "Account"], "Name": "Xen", "Id": "001000000000027AAA"]], stage, in: directory)
        let xen = try #require(third.first { $0["Name"] == "Xen" })
        #expect(xen[SyncField.locallyCreated] == true && xen[SyncField.locallyDeleted] == true)
    }

    /// A self-lookup under LEAVE_IF_CHANGED leaves an entry with local changes as it is: its
    /// record is a conflict, and its link is not set either; the other records link as usual.
    @Test func aSelfLookupLeavesALocallyChangedEntryAlone() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stage = """
            [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name", "mergeMode": "LEAVE_IF_CHANGED",
                "parent": { "soup": "AccountSoup", "key": "ParentName", "matchOn": "Name", "idField": "ParentId", "required": false } } ]
            """
        try write("Name,ParentName\nMom,\nKid,\nSis,\n", to: "accounts.csv", in: directory)
        _ = try await run(directory, stage)
        let (_, store) = try await run(directory, """
            [ { "id": "mark", "type": "markDirty", "soup": "AccountSoup", "where": "Name = 'Kid'", "as": "updated" } ]
            """)
        let before = try #require(try await entries(store, "AccountSoup").first { $0["Name"] == "Kid" })
        try write("Name,ParentName\nKid,Mom\nSis,Mom\nMom,\n", to: "accounts.csv", in: directory)
        let (outcome, after) = try await run(directory, stage)
        #expect(outcome.report.stages[1].counts["conflicts"] == 1)
        let entries = try await entries(after, "AccountSoup")
        let kid = try #require(entries.first { $0["Name"] == "Kid" })
        #expect(kid["ParentId"] == nil && kid[SyncField.soupLastModifiedDate] == before[SyncField.soupLastModifiedDate], "not written")
        #expect(entries.first { $0["Name"] == "Sis" }?["ParentId"] == entries.first { $0["Name"] == "Mom" }?["Id"])
    }

    /// Several pages (2,000 entries each, one written while the next is read): every chosen entry
    /// flagged once, the others left alone, and a second run finds nothing more to flag.
    @Test func markDirtyAcrossPages() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("Name,Industry\n" + (0..<4500).map { "Account \($0),\($0 % 3 == 0 ? "Tech" : "Energy")\n" }.joined(),
                  to: "accounts.csv", in: directory)
        let stages = """
            [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name" },
              { "id": "mark", "type": "markDirty", "after": ["stage"], "soup": "AccountSoup", "where": "Industry = 'Tech'", "as": "created" } ]
            """
        let (outcome, store) = try await run(directory, stages)
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[2].counts == ["read": 1500, "created": 1500, "updated": 0, "deleted": 0, "unchanged": 0])
        let dirty = try await store.dirtyEntries(in: "AccountSoup", limit: 5000)
        #expect(dirty.count == 1500)
        #expect(dirty.allSatisfy { $0["Industry"] == "Tech" && $0[SyncField.locallyCreated] == true })
        let (again, _) = try await run(directory, stages)
        #expect(again.report.stages[2].counts["created"] == 0)
        #expect(again.report.stages[2].counts["unchanged"] == 1500)
    }

    /// `markDirty` of every entry with one flag is done in SQL (``SoupStore/flagAll(_:in:)``): the
    /// same entries, counts and index columns as the entry-by-entry path a `where` takes.
    @Test func flaggingEveryEntryMatchesTheEntryByEntryPath() async throws {
        func load(where condition: String?) async throws -> (RunOutcome, [JSONObject], [JSONObject]) {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try write("Name,Industry\nAcme,Tech\nGlobex,Energy\nInitech,Banking\nUmbrella,Pharma\n", to: "accounts.csv", in: directory)
            let (outcome, store) = try await run(directory, """
                [ { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                  { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name" },
                  { "id": "one", "type": "markDirty", "after": ["stage"], "soup": "AccountSoup", "where": "Name = 'Acme'", "as": "updated" },
                  { "id": "two", "type": "markDirty", "after": ["one"], "soup": "AccountSoup", "where": "Name = 'Globex'", "as": "deleted" },
                  { "id": "all", "type": "markDirty", "after": ["two"], "soup": "AccountSoup", "as": "updated"
                    \(condition.map { ", \"where\": \"\($0)\"" } ?? "") } ]
                """)
            // Ids are `local_` ids of each run, and dates its own: the rest must match.
            let strip: (JSONObject) -> JSONObject = { entry in
                var entry = entry
                for field in ["Id", SyncField.soupLastModifiedDate, SyncField.soupCreatedDate] { entry[field] = nil }
                return entry
            }
            let all = try await entries(store, "AccountSoup").map(strip)
            // Found through the `__local__` index column the flagging wrote.
            let dirty = try await store.entries(in: "AccountSoup", where: SyncField.local, in: [true])[true] ?? []
            return (outcome, all, dirty.map(strip))
        }
        let (fast, fastEntries, fastDirty) = try await load(where: nil)
        let (slow, slowEntries, slowDirty) = try await load(where: "Name != null")
        #expect(fast.exitCode == 0 && slow.exitCode == 0)
        #expect(fast.report.stages[4].counts == ["read": 4, "created": 0, "updated": 3, "deleted": 0, "unchanged": 1])
        #expect(fast.report.stages[4].counts == slow.report.stages[4].counts)
        #expect(fast.report.stages[4].byObject == slow.report.stages[4].byObject)
        #expect(fastEntries == slowEntries)
        #expect(fastEntries.allSatisfy { $0[SyncField.local] == true && $0[SyncField.locallyUpdated] == true })
        #expect(fastEntries[1][SyncField.locallyDeleted] == true)
        #expect(fastDirty.count == 4)
        #expect(fastDirty == slowDirty)
    }

    @Test func settingsAreCheckedAgainstTheSoups() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { \(Self.soups), "stages": [
                { "id": "a", "type": "stage", "soup": "AccountSoup", "matchOn": "Website", "mergeMode": "MERGE", "markDirty": "yes" },
                { "id": "b", "type": "markDirty", "soup": "Nope", "as": "touched", "where": "Name = " } ] }
            """, in: directory)
        #expect(errors == [
            "stages[0].mergeMode: must be one of \"OVERWRITE\", \"LEAVE_IF_CHANGED\", not \"MERGE\"",
            "stages[0].markDirty: must be a boolean (true or false without quotes), not string \"yes\"",
            "stages[0].matchOn: soup \"AccountSoup\" has no index on \"Website\"; matching needs an indexed path (indexed: Id, Name, __local__)",
            "stages[1].soup: no soup named \"Nope\"; known soups: AccountSoup, ContactSoup",
            "stages[1].as: must be one of \"created\", \"updated\", \"deleted\", \"auto\", not \"touched\"",
            "stages[1].where: MALFORMED_QUERY at row 1, column 8: unexpected token: <EOF>",
        ])
    }
}
