import Foundation
import JSON
import Testing

/// Bulk API 2.0 ingest and query jobs.
@Suite struct BulkTests {
    func createIngest(_ emu: EmulatorHarness, _ body: JSONValue) async throws -> String {
        let reply = try await emu.rest("POST", "/jobs/ingest", json: body)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json["state"] == "Open")
        #expect(reply.json["jobType"] == "V2Ingest")
        return try #require(reply.json["id"]?.stringValue)
    }

    func upload(_ emu: EmulatorHarness, _ id: String, _ csv: String) async throws -> Int {
        try await emu.send("PUT", "/services/data/v62.0/jobs/ingest/\(id)/batches", body: Data(csv.utf8), contentType: "text/csv").status
    }

    /// Polls an ingest job until it ends, as clients do: it is `UploadComplete` or `InProgress`
    /// until then, and its processed count never goes down.
    func finished(_ emu: EmulatorHarness, _ id: String) async throws -> JSONValue {
        var last: Int64 = 0
        for _ in 0..<3000 {
            let info = try await emu.rest("GET", "/jobs/ingest/\(id)").json
            let processed = info["numberRecordsProcessed"]?.integerValue ?? -1
            #expect(processed >= last, "numberRecordsProcessed only rises")
            last = processed
            let state = info["state"]?.stringValue ?? ""
            if ["JobComplete", "Failed", "Aborted"].contains(state) { return info }
            #expect(state == "UploadComplete" || state == "InProgress", "\(info)")
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("job \(id) never ended")
        return .null
    }

    /// The org processes a closed job in the background, as a real one does: its status is
    /// answered while it runs — `InProgress`, part of its rows processed (held there by a fault) —
    /// and every row ends processed.
    @Test func anIngestJobRunsInTheBackground() async throws {
        try await withEmulator { (emu) async throws in
            try await emu.setFaults(["bulkPauseAfterRows": 500])
            let id = try await createIngest(emu, ["object": "Account", "operation": "insert"])
            let rows = (0..<1_200).map { "Background \($0),Energy" }
            #expect(try await upload(emu, id, "Name,Industry\n" + rows.joined(separator: "\n") + "\n") == 201)
            let close = try await emu.rest("PATCH", "/jobs/ingest/\(id)", json: ["state": "UploadComplete"])
            #expect(close.json["state"] == "UploadComplete")
            var info = JSONValue.null
            for _ in 0..<3000 where info["numberRecordsProcessed"] != 500 {
                info = try await emu.rest("GET", "/jobs/ingest/\(id)").json
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(info["state"] == "InProgress" && info["numberRecordsProcessed"] == 500, "\(info)")
            let soql = "SELECT+COUNT()+FROM+Account+WHERE+Name+LIKE+'Background%25'"
            #expect(try await emu.rest("GET", "/query?q=" + soql).json["totalSize"] == 500, "the first chunk is in the org, the rest not yet")
            try await emu.setFaults([:])
            let done = try await finished(emu, id)
            #expect(done["state"] == "JobComplete")
            #expect(done["numberRecordsProcessed"] == 1_200)
            #expect(done["numberRecordsFailed"] == 0)
            let successes = try await emu.rest("GET", "/jobs/ingest/\(id)/successfulResults/")
            #expect(successes.text.split(separator: "\n").count == 1_201)
        }
    }

    @Test func insertJobRunsEveryRowAndReportsResults() async throws {
        try await withEmulator { (emu) async throws in
            let id = try await createIngest(emu, ["object": "Contact", "operation": "insert", "contentType": "CSV", "lineEnding": "LF"])
            #expect(id.hasPrefix("750"))
            #expect(try await upload(emu, id, "LastName,Email,Account.External_Id__c\nBulk One,one@example.com,ACME-1\n") == 201)
            #expect(try await upload(emu, id, "LastName,Email,Account.External_Id__c\n\"Two, Quoted\",two@example.com,GLOBEX-1\n,missing@example.com,ACME-1\n") == 201)
            let close = try await emu.rest("PATCH", "/jobs/ingest/\(id)", json: ["state": "UploadComplete"])
            #expect(close.status == 200)
            #expect(close.json["state"] == "UploadComplete")
            let info = try await finished(emu, id)
            #expect(info["state"] == "JobComplete")
            #expect(info["numberRecordsProcessed"] == 3)
            #expect(info["numberRecordsFailed"] == 1)

            let successes = try await emu.rest("GET", "/jobs/ingest/\(id)/successfulResults/")
            #expect(successes.header("Content-Type")?.hasPrefix("text/csv") == true)
            let successLines = successes.text.split(separator: "\n").map(String.init)
            #expect(successLines[0] == #""sf__Id","sf__Created",LastName,Email,Account.External_Id__c"#)
            #expect(successLines.count == 3)
            #expect(successLines[2].hasSuffix(#","true","Two, Quoted",two@example.com,GLOBEX-1"#))
            let failures = try await emu.rest("GET", "/jobs/ingest/\(id)/failedResults/")
            let failureLines = failures.text.split(separator: "\n").map(String.init)
            #expect(failureLines == [#""sf__Id","sf__Error",LastName,Email,Account.External_Id__c"#,
                                     #""","REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --",,missing@example.com,ACME-1"#])
            // The relationship column resolved the parent by its external id.
            let globex = try await emu.id("Account", "External_Id__c", "GLOBEX-1")
            let created = try await emu.id("Contact", "Email", "two@example.com")
            #expect(try await emu.record("Contact", created)["AccountId"]?.stringValue == globex)
            // The job's ids were taken in a block: a record created after it gets another.
            let jobIds = successLines.dropFirst().map { $0.split(separator: ",")[0].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            #expect(Set(jobIds).count == 2 && jobIds.allSatisfy { $0.hasPrefix("003") })
            let later = try await emu.create("Contact", ["LastName": "After the job"])
            #expect(!jobIds.contains(later))
            #expect(try await emu.rest("DELETE", "/jobs/ingest/\(id)").status == 204)
            #expect(try await emu.rest("GET", "/jobs/ingest/\(id)").status == 404)
        }
    }

    /// An insert job's rows go without a savepoint each: a row failing its last check (a
    /// duplicate unique value) has written nothing, and the rows around it are kept.
    @Test func aRowFailingItsLastCheckLeavesNoTrace() async throws {
        try await withEmulator { (emu) async throws in
            let id = try await createIngest(emu, ["object": "Account", "operation": "insert"])
            #expect(try await upload(emu, id, "Name,External_Id__c\nOne,ROW-1\nTwo,ROW-1\nThree,ACME-1\nFour,ROW-4\n") == 201)
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(id)", json: ["state": "UploadComplete"]).status == 200)
            let info = try await finished(emu, id)
            #expect(info["numberRecordsProcessed"] == 4 && info["numberRecordsFailed"] == 2, "\(info)")
            let failures = try await emu.rest("GET", "/jobs/ingest/\(id)/failedResults/").text
            #expect(failures.components(separatedBy: "DUPLICATE_VALUE").count == 3, "\(failures)")
            #expect(try await emu.count("Account") == 5, "the seed's 3 and the two that passed")
            #expect(try await emu.record("Account", try await emu.id("Account", "External_Id__c", "ROW-1"))["Name"] == "One")
            #expect(try await emu.record("Account", try await emu.id("Account", "External_Id__c", "ACME-1"))["Name"] != "Three")
        }
    }

    /// A row failing on a column before its `Id` (a relationship whose parent is not found)
    /// still reports its id.
    @Test func aRowFailingBeforeItsIdColumnStillReportsIt() async throws {
        try await withEmulator { (emu) async throws in
            let wile = try await emu.id("Contact", "Email", "wile@acme.example")
            let id = try await createIngest(emu, ["object": "Contact", "operation": "update"])
            #expect(try await upload(emu, id, "Account.External_Id__c,Id,LastName\nNOPE-1,\(wile),Renamed\n") == 201)
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(id)", json: ["state": "UploadComplete"]).status == 200)
            #expect(try await finished(emu, id)["numberRecordsFailed"] == 1)
            let failures = try await emu.rest("GET", "/jobs/ingest/\(id)/failedResults/").text.split(separator: "\n").map(String.init)
            #expect(failures.count == 2 && failures[1].hasPrefix("\"\(wile)\",\"INVALID_FIELD:Foreign key external ID: NOPE-1"), "\(failures)")
        }
    }

    @Test func upsertUpdateAndDeleteJobs() async throws {
        try await withEmulator { (emu) async throws in
            let upsert = try await createIngest(emu, ["object": "Account", "operation": "upsert", "externalIdFieldName": "External_Id__c"])
            #expect(try await upload(emu, upsert, "External_Id__c,Name\nACME-1,Acme Renamed\nNEW-9,Brand New\n") == 201)
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(upsert)", json: ["state": "UploadComplete"]).status == 200)
            _ = try await finished(emu, upsert)
            let results = try await emu.rest("GET", "/jobs/ingest/\(upsert)/successfulResults")
            #expect(results.text.contains(#""false",ACME-1,Acme Renamed"#))
            #expect(results.text.contains(#""true",NEW-9,Brand New"#))
            let newId = try await emu.id("Account", "External_Id__c", "NEW-9")

            let update = try await createIngest(emu, ["object": "Account", "operation": "update"])
            #expect(try await upload(emu, update, "Id,Industry,Description\n\(newId),Energy,#N/A\n") == 201)
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(update)", json: ["state": "UploadComplete"]).status == 200)
            _ = try await finished(emu, update)
            #expect(try await emu.record("Account", newId)["Industry"] == "Energy")

            let delete = try await createIngest(emu, ["object": "Account", "operation": "delete"])
            #expect(try await upload(emu, delete, "Id\n\(newId)\n001000000000000AAA\n") == 201)
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(delete)", json: ["state": "UploadComplete"]).status == 200)
            let info = try await finished(emu, delete)
            #expect(info["numberRecordsProcessed"] == 2)
            #expect(info["numberRecordsFailed"] == 1)
            #expect(try await emu.rest("GET", "/sobjects/Account/\(newId)").json[0]?["errorCode"] == "ENTITY_IS_DELETED")
        }
    }

    @Test func badJobsAndStates() async throws {
        try await withEmulator { (emu) async throws in
            let noExternalId = try await emu.rest("POST", "/jobs/ingest", json: ["object": "Account", "operation": "upsert"])
            #expect(noExternalId.status == 400)
            let unknownColumn = try await createIngest(emu, ["object": "Account", "operation": "insert"])
            #expect(try await upload(emu, unknownColumn, "Name,Industryy\nX,Energy\n") == 201)
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(unknownColumn)", json: ["state": "UploadComplete"]).status == 200)
            let failed = try await finished(emu, unknownColumn)
            #expect(failed["state"] == "Failed")
            #expect(failed["errorMessage"] == "InvalidBatch : Field name not found : Industryy")
            let unprocessed = try await emu.rest("GET", "/jobs/ingest/\(unknownColumn)/unprocessedRecords")
            #expect(unprocessed.text == "Name,Industryy\nX,Energy\n")
            // No upload once the job is closed.
            #expect(try await upload(emu, unknownColumn, "Name\nY\n") == 409)
            let aborted = try await createIngest(emu, ["object": "Account", "operation": "insert"])
            #expect(try await emu.rest("PATCH", "/jobs/ingest/\(aborted)", json: ["state": "Aborted"]).json["state"] == "Aborted")
            #expect(try await emu.rest("GET", "/jobs/ingest/7500S0000000999AAA").status == 404)
        }
    }

    @Test func queryJobPagesWithLocators() async throws {
        try await withEmulator { (emu) async throws in
            let create = try await emu.rest("POST", "/jobs/query", json: ["operation": "query", "query": "SELECT Id, LastName, Account.Name FROM Contact ORDER BY LastName"])
            #expect(create.status == 200)
            // The create answer has the twelve keys an org's does: no jobType, query or counts yet.
            #expect(Set(create.json.objectValue?.keys.map { $0 } ?? []) == ["id", "operation", "object", "createdById", "createdDate", "systemModstamp",
                                                                         "state", "concurrencyMode", "contentType", "apiVersion", "lineEnding", "columnDelimiter"])
            #expect(create.json["object"] == "Contact")
            #expect(create.json["state"] == "UploadComplete")
            let id = try #require(create.json["id"]?.stringValue)
            let info = try await emu.rest("GET", "/jobs/query/\(id)").json
            #expect(info["state"] == "JobComplete")
            #expect(info["jobType"] == "V2Query")
            #expect(info["isPkChunkingSupported"] == true)
            #expect(info["numberRecordsProcessed"] == 3)
            #expect(info["query"] == nil && info["numberRecordsFailed"] == nil)
            let first = try await emu.rest("GET", "/jobs/query/\(id)/results?maxRecords=2")
            #expect(first.header("Sforce-NumberOfRecords") == "2")
            let locator = try #require(first.header("Sforce-Locator"))
            #expect(locator == "Mg")
            let lines = first.text.split(separator: "\n").map(String.init)
            #expect(lines[0] == #""Id","LastName","Account.Name""#)
            #expect(lines[1].hasSuffix(#","Coyote","Acme Corporation""#))
            let second = try await emu.rest("GET", "/jobs/query/\(id)/results?maxRecords=2&locator=\(locator)")
            #expect(second.header("Sforce-Locator") == "null")
            #expect(second.header("Sforce-NumberOfRecords") == "1")
            #expect(second.text.split(separator: "\n").last?.hasSuffix(#","Scorpio","Globex""#) == true)
            let bad = try await emu.rest("POST", "/jobs/query", json: ["query": "SELECT Nope FROM Contact"])
            #expect(bad.status == 400)
        }
    }
}
