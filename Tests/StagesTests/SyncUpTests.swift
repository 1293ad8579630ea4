import Connectors
import Foundation
import JSON
import Soups
import Stages
import Synchronization
import Testing

/// `syncUp` of a single soup through each target (and Bulk), end to end over the emulator.
@Suite struct SyncUpTests {
    /// rest, batch and collection targets, and the collection target forced through Bulk 2.0.
    static let variants: [(type: String, strategy: String)] = [("rest", "auto"), ("batch", "auto"), ("collection", "auto"), ("collection", "bulk")]

    @Test(arguments: 0..<4) func everyLocalChangeReachesTheOrg(variant: Int) async throws {
        let (type, strategy) = Self.variants[variant]
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts",
                "target": { "type": "\(type)", "createFieldlist": ["Name", "Industry", "External_Id__c"], "updateFieldlist": ["Name"] },
                "options": { "mergeMode": "OVERWRITE" } } ]
            """, stages: """
            [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "\(strategy)" } ]
            """)
        let updated = try await bench.serverRecord("Account", ["Name": "Before", "Industry": "Energy"])
        let deleted = try await bench.serverRecord("Account", ["Name": "Doomed"])
        let untouched = try await bench.serverRecord("Account", ["Name": "Untouched"])
        typealias H = SyncHarness
        try await bench.put([
            H.local("Account", "local_1", ["Name": "Created", "Industry": "Banking", "Description": "not in the create list"]),
            H.flagged(updated, SyncField.locallyUpdated, ["Name": "After", "Industry": "Technology"]),
            H.flagged(deleted, SyncField.locallyDeleted),
            H.flagged(H.local("Account", "local_2", ["Name": "Never sent"]), SyncField.locallyDeleted),
            H.local("Account", "local_3", ["Name": .string(String(repeating: "x", count: 300))]),
            { var entry = H.local("Account", "local_4", ["Name": "No type"]); entry["attributes"] = nil; return entry }(),
            untouched,
        ], into: "Accounts", pipeline)

        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 3, "failed records make the run partial")
        let counts = outcome.report.stages[0].counts
        #expect(counts["created"] == 1)
        #expect(counts["updated"] == 1)
        #expect(counts["deleted"] == 2, "the server delete and the local-only one")
        #expect(counts["failed"] == 2)
        #expect(outcome.report.stages[0].byObject["Account"]?["created"] == 1)

        let entries = try await bench.entries("Accounts", pipeline)
        #expect(entries.count == 5, "the deleted and the created-then-deleted entries are gone")
        let created = try #require(entries.first { $0["Name"] == "Created" })
        let createdId = try #require(created["Id"]?.stringValue)
        #expect(!SyncField.isLocalId(createdId) && !created.isDirty && created[SyncField.lastError] == .null)
        let server = try await bench.query("SELECT Name, Industry, Description FROM Account WHERE Id = '\(createdId)'")
        #expect(server.first?["Industry"] == "Banking")
        #expect(server.first?["Description"] == .null, "Description is not in the create list")
        let afterServer = try await bench.query("SELECT Name, Industry FROM Account WHERE Id = '\(updated["Id"]!.stringValue!)'")
        #expect(afterServer.first?["Name"] == "After")
        #expect(afterServer.first?["Industry"] == "Energy", "Industry is not in the update list")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Id = '\(deleted["Id"]!.stringValue!)'").isEmpty)
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Never sent'").isEmpty)

        let tooLong = try #require(entries.first { $0["Id"] == "local_3" })
        #expect(tooLong.isDirty && tooLong[SyncField.locallyCreated] == true)
        #expect(tooLong.lastErrorCode == "STRING_TOO_LONG")
        let noType = try #require(entries.first { $0["Id"] == "local_4" })
        #expect(noType.isDirty && noType.lastErrorCode == "INVALID_TYPE")
        #expect(entries.first { $0["Name"] == "Untouched" }?[SyncField.lastError] == .null)

        let report = (outcome.report.reportDir as NSString)
        let success = try String(contentsOfFile: report.appendingPathComponent("Account-success.csv"), encoding: .utf8)
        #expect(success.hasPrefix("stage,operation,_soupEntryId,localId,Id,errorCode,errorMessage,"))
        #expect(success.contains("up,create,1,local_1,\(createdId),,,Created,Banking"))
        let errors = try String(contentsOfFile: report.appendingPathComponent("Account-error.csv"), encoding: .utf8)
        #expect(errors.contains("STRING_TOO_LONG"))

        let sync = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "up")
        #expect(sync.status == .done && sync.progress == 100 && sync.totalSize == 6)

        // A second run sends only what is still dirty, and changes nothing that was confirmed.
        let again = try await bench.run(pipeline)
        #expect(again.report.stages[0].counts["created"] == 0 && again.report.stages[0].counts["failed"] == 2)
    }

    /// A Bulk page whose writes are all creates the org made is saved without the general passes
    /// (pages of 4: the first all creates, the second holding a record the org refuses): its
    /// entries, what the org confirmed, the journal and the result rows come out exactly as the
    /// general passes leave the other page's created entries.
    @Test func aPageOfCreatesIsSavedAsTheGeneralPassesSaveIt() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "createFieldlist": ["Name", "Industry"] } } ]
            """, stages: """
            [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "bulk", "pageSize": 4 } ]
            """)
        typealias H = SyncHarness
        var entries = (0..<8).map { index -> JSONObject in
            var entry = H.local("Account", "local_p\(index)", ["Name": .string("Page \(index)"), "Industry": "Energy",
                                                             "Description": "kept, not sent", "NumberOfEmployees": .integer(Int64(index))])
            entry[SyncField.lastError] = .string(#"{"errorCode":"UNABLE_TO_LOCK_ROW","message":"an earlier run's"}"#)
            return entry
        }
        entries[6]["Name"] = .string(String(repeating: "x", count: 300))
        try await bench.put(entries, into: "Accounts", pipeline)

        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 3 && outcome.report.stages[0].counts["created"] == 7 && outcome.report.stages[0].counts["failed"] == 1,
                "\(outcome.report.stages[0].counts)")
        let stored = try await bench.entries("Accounts", pipeline).sorted { ($0.soupEntryId ?? 0) < ($1.soupEntryId ?? 0) }
        try #require(stored.count == 8)
        let store = try SoupStore.openForReading(path: pipeline.store)
        defer { try? store.close() }
        let confirmed = try await store.confirmed(ids: stored.compactMap(\.soupEntryId), in: "Accounts")
        #expect(try await store.journal.entries(of: "up").isEmpty, "every write settled, the refused one too")
        let org = try await bench.query("SELECT Id, Name FROM Account WHERE Name LIKE 'Page %'")
        let orgIds = Dictionary(uniqueKeysWithValues: org.map { ($0["Name"]!.stringValue!, $0["Id"]!) })
        // Entries 0–3 were saved by the page of creates, 4, 5 and 7 by the general passes.
        let general = stored[4]
        for (index, entry) in stored.enumerated() where index != 6 {
            #expect(entry["Id"] == orgIds["Page \(index)"] && !entry.isDirty, "entry \(index) holds its new id, clean")
            #expect(entry.keys == general.keys, "entry \(index): the same members, in the same order")
            for key in general.keys where !["Id", "Name", "NumberOfEmployees", SyncField.soupEntryId, SyncField.soupLastModifiedDate,
                                            "_soupCreatedDate"].contains(key) {
                #expect(entry[key] == general[key], "entry \(index): \(key)")
            }
            #expect(confirmed[entry.soupEntryId!] == entry.dataFields, "entry \(index): what the org confirmed")
        }
        #expect(confirmed[stored[6].soupEntryId!] == nil && stored[6].isDirty)
        let success = try String(contentsOfFile: (outcome.report.reportDir as NSString).appendingPathComponent("Account-success.csv"), encoding: .utf8)
        let lines = success.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.first == "stage,operation,_soupEntryId,localId,Id,errorCode,errorMessage,Name,Industry")
        for (index, entry) in stored.enumerated() where index != 6 {
            #expect(lines.contains("up,create,\(entry.soupEntryId!),local_p\(index),\(entry["Id"]!.stringValue!),,,Page \(index),Energy"), "row of \(index)")
        }
        #expect(lines.count == 8)
    }

    /// Without a field list, a record sends its scalar fields only: a page of creates saved in
    /// place lists in its result rows the fields each record sent, not a nested value another
    /// record's scalar put among the page's columns — as the general passes list them.
    @Test func aPageOfCreatesListsTheFieldsEachRecordSent() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": {} } ]
            """, stages: """
            [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "bulk", "pageSize": 4 } ]
            """)
        typealias H = SyncHarness
        let descriptions: [JSONValue] = [["Street": "1 Main"], "plain text", .null, ["x", "y"]]
        let entries = descriptions.enumerated().map { index, description in
            H.local("Account", "local_n\(index)", ["Name": .string("Nested \(index)"), "Description": description])
        }
        try await bench.put(entries, into: "Accounts", pipeline)

        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0 && outcome.report.stages[0].counts["created"] == 4, "\(outcome.report.stages[0].counts)")
        let org = try await bench.query("SELECT Name, Description FROM Account WHERE Name LIKE 'Nested %' ORDER BY Name")
        #expect(org.map { $0["Description"] ?? .null } == [.null, "plain text", .null, .null])
        let success = try String(contentsOfFile: (outcome.report.reportDir as NSString).appendingPathComponent("Account-success.csv"), encoding: .utf8)
        let lines = success.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let stored = try await bench.entries("Accounts", pipeline).sorted { ($0.soupEntryId ?? 0) < ($1.soupEntryId ?? 0) }
        #expect(lines.first == "stage,operation,_soupEntryId,localId,Id,errorCode,errorMessage,Name,Description")
        for (index, expected) in ["Nested 0,", "Nested 1,plain text", "Nested 2,", "Nested 3,"].enumerated() {
            let entry = stored[index]
            #expect(lines.contains("up,create,\(entry.soupEntryId!),local_n\(index),\(entry["Id"]!.stringValue!),,,\(expected)"), "row of \(index)")
            #expect(entry["Description"] == descriptions[index] && !entry.isDirty, "entry \(index) keeps what it holds")
        }
    }

    /// Bulk jobs span pages (pages of 4 records, jobs of at most 10 rows), records missing a
    /// column join a job with it, updates and deletes get jobs of their own, and every page is
    /// saved from its jobs' results: each record once, ids in the soup, a refused row failed.
    @Test func bulkJobsSpanPages() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts",
                "target": { "createFieldlist": ["Name", "Industry"], "updateFieldlist": ["Name"] } } ]
            """, stages: """
            [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "bulk", "pageSize": 4, "bulkJobRecords": 10 } ]
            """)
        typealias H = SyncHarness
        var entries = (0..<25).map { index -> JSONObject in
            var fields: JSONObject = ["Name": .string("Span \(index)")]
            if index % 3 == 0 { fields["Industry"] = "Energy" }
            return H.local("Account", "local_s\(index)", fields)
        }
        entries[13]["Name"] = .string(String(repeating: "x", count: 300))
        for index in 0..<3 {
            entries.append(H.flagged(try await bench.serverRecord("Account", ["Name": .string("Old \(index)")]), SyncField.locallyUpdated,
                                     ["Name": .string("Renamed \(index)")]))
        }
        for index in 0..<2 {
            entries.append(H.flagged(try await bench.serverRecord("Account", ["Name": .string("Gone \(index)")]), SyncField.locallyDeleted))
        }
        try await bench.put(entries, into: "Accounts", pipeline)

        let outcome = try await bench.run(pipeline)
        let counts = outcome.report.stages[0].counts
        #expect(outcome.exitCode == 3, "one record refused: partial")
        #expect(counts["created"] == 24 && counts["failed"] == 1 && counts["updated"] == 3 && counts["deleted"] == 2, "\(counts)")
        let jobs = try await bench.client.send(OrgRequest(method: "GET", path: bench.client.apiPath + "/jobs/ingest", kind: "bulk")).json()
        let operations = (jobs["records"]?.arrayValue ?? []).compactMap { $0["operation"]?.stringValue }.sorted()
        #expect(operations == ["delete", "insert", "insert", "insert", "update"], "inserts in jobs of 10, 10 and 5 rows: \(operations)")

        let org = try await bench.query("SELECT Id, Name, Industry FROM Account WHERE Name LIKE 'Span %' OR Name LIKE 'Renamed %' OR Name LIKE 'Gone %'")
        #expect(org.count == 27, "24 created once each and 3 renamed; the 2 deleted are gone")
        let byName = Dictionary(org.map { ($0["Name"]!.stringValue!, $0) }, uniquingKeysWith: { first, _ in first })
        let stored = try await bench.entries("Accounts", pipeline)
        #expect(stored.count == 28, "the two deleted entries are gone")
        for entry in stored {
            let name = entry["Name"]?.stringValue ?? ""
            if name.hasPrefix("x") {
                #expect(entry.isDirty && entry.lastErrorCode == "STRING_TOO_LONG")
            } else {
                #expect(!entry.isDirty && entry["Id"] == byName[name]?["Id"], "\(name) holds the org's id")
            }
        }
        #expect(byName["Span 3"]?["Industry"] == "Energy" && byName["Span 4"]?["Industry"] == .null)
    }

    /// A Bulk job's results that could not be read leave its records uncertain; the next round
    /// reads the job again from the journal — rebuilding the very rows it was sent, a page split
    /// across two jobs and rows without some columns included — and adopts every record once
    /// (inserts, and upserts by external id).
    @Test(arguments: [false, true]) func aSpanningJobIsReadBackFromTheJournal(externalId: Bool) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let external = externalId ? #", "externalIdFieldName": "External_Id__c""# : ""
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "createFieldlist": ["Name", "Industry"]\(external) } } ]
            """, stages: """
            [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "bulk", "pageSize": 3, "bulkJobRecords": 4 } ]
            """)
        // Pages of 3 into jobs of 4: the second page is split across the first two jobs, and the
        // second job's rows have no Industry though its columns do.
        try await bench.put((0..<10).map { index in
            var fields: JSONObject = ["Name": .string("Split \(index)")]
            if index % 3 == 0 { fields["Industry"] = "Energy" }
            if externalId { fields["External_Id__c"] = .string("SPLIT-\(index)") }
            return SyncHarness.local("Account", "local_x\(index)", fields)
        }, into: "Accounts", pipeline)
        // The first answer of each job's successful results is lost.
        let seen = Mutex<Set<String>>([])
        let outcome = try await bench.run(pipeline) { client in
            InterceptingClient(base: client) { request, send in
                if request.path.hasSuffix("/successfulResults"), seen.withLock({ $0.insert(request.path).inserted }) {
                    throw OrgClientError.uncertain("the answer was lost")
                }
                return try await send()
            }
        }
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["created"] == 10 && outcome.report.stages[0].counts["uncertain"] == 0,
                "\(outcome.report.stages[0].counts)")
        let jobs = try await bench.client.send(OrgRequest(method: "GET", path: bench.client.apiPath + "/jobs/ingest", kind: "bulk")).json()
        #expect(jobs["records"]?.arrayValue?.count == 3, "jobs of 4, 4 and 2 rows")
        let org = try await bench.query("SELECT Id, Name, Industry FROM Account WHERE Name LIKE 'Split %'")
        #expect(org.count == 10, "each record created once")
        let byName = Dictionary(org.map { ($0["Name"]!.stringValue!, $0) }, uniquingKeysWith: { first, _ in first })
        for entry in try await bench.entries("Accounts", pipeline) {
            #expect(!entry.isDirty && entry["Id"] == byName[entry["Name"]?.stringValue ?? ""]?["Id"])
        }
    }

    @Test(arguments: ["rest", "batch", "collection"]) func externalIdTurnsACreateIntoAnUpsert(type: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts",
                "target": { "type": "\(type)", "externalIdFieldName": "External_Id__c" }, "options": { "fieldlist": ["Name", "External_Id__c"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "up" } ]"#)
        try await bench.put([
            SyncHarness.local("Account", "local_1", ["Name": "Acme renamed", "External_Id__c": "ACME-1"]),
            SyncHarness.local("Account", "local_2", ["Name": "Brand new", "External_Id__c": "NEW-1"]),
            SyncHarness.local("Account", "local_3", ["Name": "Local key", "External_Id__c": "local_abc"]),
        ], into: "Accounts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0)
        // The upsert that matched the org's ACME-1 updated it: counted updated, not created.
        #expect(outcome.report.stages[0].counts["created"] == 2)
        #expect(outcome.report.stages[0].counts["updated"] == 1)
        let acme = try await bench.query("SELECT Id, Name FROM Account WHERE External_Id__c = 'ACME-1'")
        #expect(acme.count == 1 && acme[0]["Name"] == "Acme renamed", "upserted onto the existing record")
        #expect(try await bench.query("SELECT Id FROM Account WHERE External_Id__c = 'NEW-1'").count == 1)
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Local key'").count == 1, "a local_ value is not an external id: created")
        let entries = try await bench.entries("Accounts", pipeline)
        #expect(entries.first { $0["External_Id__c"] == "ACME-1" }?["Id"]?.stringValue == acme[0]["Id"]?.stringValue)
        #expect(entries.allSatisfy { !$0.isDirty })
    }

    @Test func dryRunPlansWithoutWriting() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": {}, "options": { "fieldlist": ["Name", "Industry", "NumberOfEmployees"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "up" } ]"#)
        let existing = try await bench.serverRecord("Account", ["Name": "Existing"])
        // A case restricts its account's delete: the org would answer DELETE_FAILED.
        let withCase = try await bench.serverRecord("Account", ["Name": "Has a case"])
        _ = try await bench.serverRecord("Case", ["Subject": "Open", "AccountId": withCase["Id"]!])
        try await bench.put([
            SyncHarness.local("Account", "local_1", ["Name": "Fine"]),
            SyncHarness.local("Account", "local_2", ["Industry": "Banking"]),
            SyncHarness.local("Account", "local_3", ["Name": .string(String(repeating: "y", count: 256))]),
            SyncHarness.flagged(existing, SyncField.locallyUpdated, ["Name": "Renamed"]),
            SyncHarness.flagged(withCase, SyncField.locallyDeleted),
        ], into: "Accounts", pipeline)
        let before = try Data(contentsOf: URL(fileURLWithPath: pipeline.store))
        let writesBefore = try await bench.query("SELECT COUNT() FROM Account").count
        let outcome = try await bench.run(pipeline, dryRun: true)
        #expect(outcome.exitCode == 3)
        #expect(outcome.report.stages[0].counts["created"] == 1)
        #expect(outcome.report.stages[0].counts["updated"] == 1)
        #expect(outcome.report.stages[0].counts["rejected"] == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: pipeline.store)) == before, "the real store is untouched")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Fine'").isEmpty, "nothing was written")
        #expect(try await bench.query("SELECT COUNT() FROM Account").count == writesBefore)
        let plan = try String(contentsOfFile: (outcome.report.reportDir as NSString).appendingPathComponent("Account-plan.csv"), encoding: .utf8)
        let lines = plan.split(separator: "\r\n").map(String.init)
        #expect(lines[0] == "stage,action,_soupEntryId,localId,Id,errorCode,errorMessage,Name,Industry")
        #expect(lines.contains { $0.hasPrefix("up,create,1,local_1,,,,Fine") })
        #expect(lines.contains { $0.hasPrefix("up,reject,2,local_2,,REQUIRED_FIELD_MISSING,") })
        #expect(lines.contains { $0.hasPrefix("up,reject,3,local_3,,STRING_TOO_LONG,") })
        #expect(lines.contains { $0.hasPrefix("up,update,4,,\(existing["Id"]!.stringValue!),,,Renamed") })
        #expect(lines.contains { $0.hasPrefix("up,reject,5,,\(withCase["Id"]!.stringValue!),DELETE_FAILED,") }, "\(lines)")
    }

    @Test func lostAnswersAreReconciledNotDuplicated() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "rest" }, "options": { "fieldlist": ["Name"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "up" } ]"#)
        try await bench.put((1...3).map { SyncHarness.local("Account", "local_\($0)", ["Name": .string("Lost \($0)")]) }, into: "Accounts", pipeline)
        try await bench.setFaults(["dropAfterCommitRate": 1.0])
        // Every answer is lost; the same run finds the records in the org and keeps them.
        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 0, "\(first.report.stages[0])")
        #expect(first.report.stages[0].counts["created"] == 3)
        #expect(first.report.stages[0].counts["uncertain"] == 0)
        #expect(try await bench.entries("Accounts", pipeline).allSatisfy { !$0.isDirty && $0["Id"]?.stringValue?.hasPrefix("001") == true })
        let success = try String(contentsOfFile: (first.report.reportDir as NSString).appendingPathComponent("Account-success.csv"), encoding: .utf8)
        #expect(success.components(separatedBy: "\r\n").filter { $0.hasPrefix("up,create,") }.count == 3)
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0)
        for number in 1...3 {
            #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Lost \(number)'").count == 1, "created once, found, not sent again")
        }
        let entries = try await bench.entries("Accounts", pipeline)
        #expect(entries.allSatisfy { !$0.isDirty && !SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") })
        #expect(second.report.stages[0].counts["created"] == 0, "nothing was sent again")
    }

    /// Records a LEAVE_IF_CHANGED sync up creates are held as created (no read of their dates), by
    /// every target and through Bulk: changed here later, one changed in the org meanwhile is a
    /// conflict (its LastModifiedDate is past its CreatedDate), the other is sent and dated.
    @Test(arguments: 0..<4) func aRecordHeldAsCreatedAndChangedInTheOrgIsAConflict(variant: Int) async throws {
        let (type, strategy) = Self.variants[variant]
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "\(type)" },
                "options": { "mergeMode": "LEAVE_IF_CHANGED", "fieldlist": ["Name"] } } ]
            """, stages: """
            [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "\(strategy)" } ]
            """)
        try await bench.put((1...2).map { SyncHarness.local("Account", "local_\($0)", ["Name": .string("New \($0)"), "LastModifiedDate": "2001-01-01T00:00:00.000+0000"]) },
                            into: "Accounts", pipeline)
        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 0 && first.report.stages[0].counts["created"] == 2)
        // The writes alone: two creates, one Collections call, or a Bulk job (its polls aside).
        let writes: [[String: Int]] = [["sobject": 2], ["composite": 1], ["composite": 1], ["bulk": 4]]
        #expect(first.report.api.byKind.filter { !["versions", "bulkStatus"].contains($0.key) } == writes[variant], "no date read: \(first.report.api.byKind)")
        let created = try await bench.entries("Accounts", pipeline)
        #expect(created.count == 2 && created.allSatisfy { !$0.isDirty && $0.isAsCreated(dateField: "LastModifiedDate") && $0["LastModifiedDate"] == nil })
        bench.advanceClock()
        let changed = try #require(created.first { $0["Name"] == "New 1" })
        try await bench.client.update("Account", id: changed["Id"]!.stringValue!, ["Name": "Renamed in the org"])
        try await bench.put(created.map { SyncHarness.flagged($0, SyncField.locallyUpdated, ["Name": .string("\($0["Name"]!.stringValue!) here")]) },
                            into: "Accounts", pipeline)
        let second = try await bench.run(pipeline)
        #expect(second.report.stages[0].counts.filter { $0.value > 0 } == ["conflicts": 1, "updated": 1], "\(second.report.stages[0].counts)")
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(changed["Id"]!.stringValue!)'").first?["Name"] == "Renamed in the org")
        let entries = try await bench.entries("Accounts", pipeline)
        let conflict = try #require(entries.first { $0["Name"] == "New 1 here" })
        #expect(conflict.isDirty && conflict.lastErrorCode == "CONFLICT" && (conflict[SyncField.lastError]?.stringValue ?? "").contains("(as created)"))
        let sent = try #require(entries.first { $0["Name"] == "New 2 here" })
        let server = try await bench.query("SELECT LastModifiedDate FROM Account WHERE Id = '\(sent["Id"]!.stringValue!)'")
        #expect(!sent.isDirty && !sent.isAsCreated(dateField: "LastModifiedDate") && sent["LastModifiedDate"] == server.first?["LastModifiedDate"])
    }

    /// A create whose answer was lost and that is found in the org and adopted is held as created
    /// too (LEAVE_IF_CHANGED): changed in the org since, it is a conflict when changed here.
    @Test func aCreateAdoptedAfterALostAnswerIsHeldAsCreated() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "rest" },
                "options": { "mergeMode": "LEAVE_IF_CHANGED", "fieldlist": ["Name"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "up" } ]"#)
        try await bench.put((1...2).map { SyncHarness.local("Account", "local_\($0)", ["Name": .string("Lost \($0)")]) }, into: "Accounts", pipeline)
        try await bench.setFaults(["dropAfterCommitRate": 1.0])
        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 0 && first.report.stages[0].counts["created"] == 2, "\(first.report.stages[0].counts)")
        try await bench.setFaults([:])
        let adopted = try await bench.entries("Accounts", pipeline)
        #expect(adopted.count == 2 && adopted.allSatisfy { !$0.isDirty && $0.isAsCreated(dateField: "LastModifiedDate") }, "\(adopted)")
        bench.advanceClock()
        let changed = try #require(adopted.first { $0["Name"] == "Lost 1" })
        try await bench.client.update("Account", id: changed["Id"]!.stringValue!, ["Name": "Renamed in the org"])
        try await bench.put(adopted.map { SyncHarness.flagged($0, SyncField.locallyUpdated, ["Name": .string("\($0["Name"]!.stringValue!) here")]) },
                            into: "Accounts", pipeline)
        let second = try await bench.run(pipeline)
        #expect(second.report.stages[0].counts.filter { $0.value > 0 } == ["conflicts": 1, "updated": 1], "\(second.report.stages[0].counts)")
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(changed["Id"]!.stringValue!)'").first?["Name"] == "Renamed in the org")
    }

    @Test func leaveIfChangedLeavesServerChangesAlone() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "batch" },
                "options": { "mergeMode": "LEAVE_IF_CHANGED", "fieldlist": ["Name"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "up" } ]"#)
        let changed = try await bench.serverRecord("Account", ["Name": "Changed remotely"])
        let gone = try await bench.serverRecord("Account", ["Name": "Deleted remotely"])
        let quiet = try await bench.serverRecord("Account", ["Name": "Quiet"])
        bench.advanceClock()
        try await bench.client.update("Account", id: changed["Id"]!.stringValue!, ["Name": "Server edit"])
        try await bench.client.delete("Account", id: gone["Id"]!.stringValue!)
        try await bench.put([
            SyncHarness.flagged(changed, SyncField.locallyUpdated, ["Name": "Local edit"]),
            SyncHarness.flagged(gone, SyncField.locallyUpdated, ["Name": "Local edit 2"]),
            SyncHarness.flagged(quiet, SyncField.locallyUpdated, ["Name": "Local edit 3"]),
        ], into: "Accounts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.report.stages[0].counts["conflicts"] == 2)
        #expect(outcome.report.stages[0].counts["updated"] == 1)
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(changed["Id"]!.stringValue!)'").first?["Name"] == "Server edit")
        let entries = try await bench.entries("Accounts", pipeline)
        #expect(entries.filter(\.isDirty).count == 2)
        #expect(entries.filter { $0.lastErrorCode == "CONFLICT" }.count == 2)
        // The record we updated carries the org's new date: a second sync up is no conflict.
        let quietEntry = try #require(entries.first { $0["Name"] == "Local edit 3" })
        let serverQuiet = try await bench.query("SELECT LastModifiedDate FROM Account WHERE Id = '\(quiet["Id"]!.stringValue!)'")
        #expect(quietEntry["LastModifiedDate"] == serverQuiet.first?["LastModifiedDate"])
    }
}

/// A user's own stage driving the sync-up engine with its own target: the seam a custom target uses.
struct CustomSyncUpStage: Stage {
    static let typeName = "test.customSyncUp"
    static let countKeys = [StageCounts.created]

    /// Sends every dirty Accounts entry as an Account, whatever its `attributes`.
    struct AccountsTarget: SyncUpTarget {
        var preferredTransport: SyncUpTransport { .composite }
        var hasChildren: Bool { false }
        let base = SoupSyncUpTarget(soupName: "Accounts", createFieldlist: ["Name"], updateFieldlist: ["Name"])

        func candidateIds(in store: SoupStore) async throws -> [Int64] { try await base.candidateIds(in: store) }

        func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] {
            try await base.trees(for: ids, in: store).map { tree in
                var tree = tree
                tree.parent.objectType = "Account"
                return tree
            }
        }
    }

    init(settings: StageSettings) throws {}

    func run(in context: StageContext) async throws -> StageResult {
        try await SyncUpStage.syncUp(AccountsTarget(), sync: "custom", mergeMode: .overwrite, in: context)
    }
}

@Suite struct CustomSyncUpTargetTests {
    @Test func aUserTargetRunsThroughTheEngine() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "custom", "syncType": "syncUp", "soupName": "Accounts", "target": {} } ]
            """, stages: #"[ { "id": "mine", "type": "test.customSyncUp" } ]"#)
        var untyped = SyncHarness.local("Account", "local_1", ["Name": "No attributes"])
        untyped["attributes"] = nil
        try await bench.put([untyped], into: "Accounts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0].error ?? "")")
        #expect(outcome.report.stages[0].byObject == ["Account": ["created": 1]])
        #expect(outcome.report.api.byKind["composite"] == 1, "the target's own transport")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'No attributes'").count == 1)
    }
}

@Suite struct SyncUpResultFileTests {
    @Test func twoStagesShareAnObjectsResultFile() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: "[]", stages: """
            [ { "id": "a", "type": "syncUp", "soup": "Accounts", "options": { "fieldlist": ["Name"] } },
              { "id": "b", "type": "syncUp", "soup": "Orders", "options": { "fieldlist": ["Name", "Industry"] }, "after": ["a"] } ]
            """)
        try await bench.put([SyncHarness.local("Account", "local_a", ["Name": "From A"])], into: "Accounts", pipeline)
        try await bench.put([SyncHarness.local("Account", "local_b", ["Name": "From B", "Industry": "Energy"])], into: "Orders", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages.map { $0.error ?? "" })")
        let text = try String(contentsOfFile: (outcome.report.reportDir as NSString).appendingPathComponent("Account-success.csv"), encoding: .utf8)
        let lines = text.split(separator: "\r\n").map(String.init)
        #expect(lines.count == 3, "one header, one row per stage: \(lines)")
        #expect(lines[0] == "stage,operation,_soupEntryId,localId,Id,errorCode,errorMessage,Name")
        #expect(lines[1].hasPrefix("a,create,1,local_a,") && lines[1].hasSuffix(",From A"))
        #expect(lines[2].hasPrefix("b,create,1,local_b,") && lines[2].hasSuffix(",From B"), "appended under the first stage's header")
    }
}
