import Foundation
import JSON
import Testing

/// sObject Collections: `/composite/sobjects` create, update, upsert, delete and retrieve.
@Suite struct CollectionsTests {
    static let rolledBack = recordError("ALL_OR_NONE_OPERATION_ROLLED_BACK",
                                        "Record rolled back because not all records were valid and the request was using AllOrNone header")

    static func records(allOrNone: Bool) -> JSONValue {
        ["allOrNone": .bool(allOrNone), "records": [
            ["attributes": ["type": "Account"], "Name": "Collected One"],
            ["attributes": ["type": "Account"], "Industry": "Energy"],
            ["attributes": ["type": "Contact"], "LastName": "Collected"],
        ]]
    }

    @Test func createWithMixedSuccess() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite/sobjects", json: Self.records(allOrNone: false))
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 3)

            let account = try #require(results[0]["id"]?.stringValue)
            #expect(results[0] == ["id": .string(account), "success": true, "errors": []])
            #expect(account.hasPrefix("001") && hasValidChecksum(account))

            #expect(results[1] == ["success": false,
                                   "errors": [recordError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Name]", fields: ["Name"])]])
            #expect(results[1]["id"] == nil, "no id key on a record that failed before it had one")

            let contact = try #require(results[2]["id"]?.stringValue)
            #expect(contact.hasPrefix("003"))
            #expect(results[2]["success"] == true)

            #expect(try await emu.record("Account", account)["Name"] == "Collected One")
            #expect(try await emu.record("Contact", contact)["LastName"] == "Collected")
            #expect(try await emu.count("Account") == 4)
            #expect(try await emu.count("Contact") == 4)

            // The call's ids were taken in a block per object: later creates get others.
            let again = try #require(try await emu.rest("POST", "/composite/sobjects", json: Self.records(allOrNone: false)).json.arrayValue)
            let later = [try await emu.create("Account", ["Name": "Later"]), try await emu.create("Contact", ["LastName": "Later"])]
            let ids = [account, contact] + again.compactMap { $0["id"]?.stringValue } + later
            #expect(ids.count == 6 && Set(ids).count == 6, "\(ids)")
        }
    }

    @Test func allOrNoneRollsEveryRecordBack() async throws {
        try await withEmulator { emu in
            let before = try await emu.counts()
            let reply = try await emu.rest("POST", "/composite/sobjects", json: Self.records(allOrNone: true))
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 3)
            for index in [0, 2] {
                #expect(results[index]["success"] == false)
                #expect(results[index]["errors"] == [Self.rolledBack], "\(results[index].jsonString)")
            }
            #expect(results[1] == ["success": false,
                                   "errors": [recordError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Name]", fields: ["Name"])]])
            #expect(try await emu.counts() == before)
            // The ids handed out in the rolled-back transaction do not exist.
            for id in [results[0], results[2]].compactMap({ $0["id"]?.stringValue }) {
                expectError(try await emu.rest("GET", "/sobjects/\(id.hasPrefix("001") ? "Account" : "Contact")/\(id)"), 404, "NOT_FOUND")
            }
        }
    }

    @Test func moreThan200RecordsIsExceededIdLimit() async throws {
        try await withEmulator { emu in
            let records: [JSONValue] = (0..<201).map { ["attributes": ["type": "Account"], "Name": .string("Bulk \($0)")] }
            let reply = try await emu.rest("POST", "/composite/sobjects", json: ["allOrNone": false, "records": .array(records)])
            #expect(reply.status == 400)
            #expect(reply.json == restError("EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than 200 records into this call"))
            #expect(try await emu.count("Account") == 3)

            // Exactly 200 is fine.
            let ok = try await emu.rest("POST", "/composite/sobjects", json: ["records": .array(Array(records.prefix(200)))])
            #expect(ok.status == 200)
            #expect(ok.json.arrayValue?.allSatisfy { $0["success"] == true } == true)
            #expect(try await emu.count("Account") == 203)
        }
    }

    @Test func missingTypeFailsThatRecord() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/composite/sobjects", json: ["records": [
                ["Name": "Typeless"],
                ["attributes": ["type": "Nope__c"], "Name": "Unknown type"],
                ["attributes": ["type": "Account"], "Name": "Typed"],
                ["attributes": ["type": "Account"], "Id": .string(unusedId(prefix: "001")), "Name": "With id"],
            ]])
            #expect(reply.status == 200)
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 4)
            #expect(results[0] == ["success": false, "errors": [recordError("INVALID_TYPE", "sObject type 'null' is not supported.")]])
            #expect(results[1] == ["success": false, "errors": [recordError("INVALID_TYPE", "sObject type 'Nope__c' is not supported.")]])
            #expect(results[2]["success"] == true)
            #expect(results[3] == ["success": false,
                                   "errors": [recordError("INVALID_FIELD", "The Id field should not be specified in the sobject data.", fields: ["Id"])]])
            #expect(try await emu.count("Account") == 4)

            let noRecords = try await emu.rest("POST", "/composite/sobjects", json: ["allOrNone": false])
            expectError(noRecords, 400, "JSON_PARSER_ERROR")
        }
    }

    @Test func updateRecords() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let wile = try await emu.id("Contact", "Email", "wile@acme.example")
            let reply = try await emu.rest("PATCH", "/composite/sobjects", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "id": .string(acme), "Industry": "Banking"],
                ["attributes": ["type": "Contact"], "Id": .string(wile), "Phone": "555-0199"],
                ["attributes": ["type": "Account"], "Id": "001RM000003oLrB000", "Name": "Bad id"],
                ["attributes": ["type": "Account"], "Name": "No id"],
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 4)
            #expect(results[0] == ["id": .string(acme), "success": true, "errors": []])
            #expect(results[1] == ["id": .string(wile), "success": true, "errors": []])
            #expect(results[2]["success"] == false)
            #expect(results[2]["errors"]?.arrayValue?.first?["statusCode"] == "MALFORMED_ID")
            #expect(results[3]["success"] == false)
            #expect(results[3]["errors"]?.arrayValue?.first?["statusCode"] == "MISSING_ARGUMENT")

            #expect(try await emu.record("Account", acme)["Industry"] == "Banking")
            #expect(try await emu.record("Contact", wile)["Phone"] == "555-0199")
        }
    }

    @Test func upsertRecordsReportCreated() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let reply = try await emu.rest("PATCH", "/composite/sobjects/Account/External_Id__c", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "External_Id__c": "ACME-1", "NumberOfEmployees": 5],
                ["attributes": ["type": "Account"], "External_Id__c": "NEW-77", "Name": "Brand new"],
                ["attributes": ["type": "Account"], "Name": "No key"],
            ]])
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 3)
            #expect(results[0] == ["id": .string(acme), "success": true, "errors": [], "created": false])
            let created = try #require(results[1]["id"]?.stringValue)
            #expect(results[1] == ["id": .string(created), "success": true, "errors": [], "created": true])
            #expect(results[2]["success"] == false)

            #expect(try await emu.record("Account", acme)["NumberOfEmployees"] == 5)
            #expect(try await emu.id("Account", "External_Id__c", "NEW-77") == created)
            #expect(try await emu.count("Account") == 4)
        }
    }

    /// Creates, updates and upserts go without a savepoint per record: one failing its last check
    /// (a duplicate unique value, found after every other check passed) has written nothing, in
    /// the record's own fields or anywhere else, and the records around it are kept.
    @Test func aRecordFailingItsLastCheckLeavesNoTrace() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let before = try await emu.record("Account", acme)
            let created = try #require(try await emu.rest("POST", "/composite/sobjects", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "Name": "First", "External_Id__c": "DUP-1"],
                ["attributes": ["type": "Account"], "Name": "Second", "External_Id__c": "DUP-1"],
                ["attributes": ["type": "Account"], "Name": "Third", "External_Id__c": "ACME-1"],
                ["attributes": ["type": "Account"], "Name": "Fourth", "External_Id__c": "DUP-4"],
            ]]).json.arrayValue)
            #expect(created.map { $0["success"] } == [true, false, false, true])
            #expect(created[1]["errors"]?[0]?["statusCode"] == "DUPLICATE_VALUE" && created[2]["errors"]?[0]?["statusCode"] == "DUPLICATE_VALUE")
            let first = try await emu.id("Account", "External_Id__c", "DUP-1")
            #expect(try await emu.record("Account", first)["Name"] == "First")
            #expect(try await emu.count("Account") == 5, "the seed's 3 and the two that passed")

            let updated = try #require(try await emu.rest("PATCH", "/composite/sobjects", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "Id": .string(acme), "Name": "Renamed", "External_Id__c": "DUP-4"],
                ["attributes": ["type": "Account"], "Id": .string(first), "Industry": "Energy"],
            ]]).json.arrayValue)
            #expect(updated.map { $0["success"] } == [false, true])
            let after = try await emu.record("Account", acme)
            #expect(after["Name"] == before["Name"] && after["External_Id__c"] == "ACME-1" && after["LastModifiedDate"] == before["LastModifiedDate"])

            let upserted = try #require(try await emu.rest("PATCH", "/composite/sobjects/Account/Id", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Account"], "Id": .string(acme), "Name": "Upserted", "External_Id__c": "DUP-1"],
            ]]).json.arrayValue)
            #expect(upserted.first?["errors"]?[0]?["statusCode"] == "DUPLICATE_VALUE")
            #expect(try await emu.record("Account", acme)["Name"] == before["Name"])
            #expect(try await emu.count("Account") == 5)
        }
    }

    @Test func deleteByIds() async throws {
        try await withEmulator { emu in
            let one = try await emu.create("Account", ["Name": "Delete one"])
            let two = try await emu.create("Contact", ["LastName": "Delete two"])
            let missing = unusedId(prefix: "001")
            let reply = try await emu.rest("DELETE", "/composite/sobjects?ids=\(one),\(two),\(missing)&allOrNone=false")
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 3)
            #expect(results[0] == ["id": .string(one), "success": true, "errors": []])
            #expect(results[1] == ["id": .string(two), "success": true, "errors": []])
            #expect(results[2]["success"] == false)
            #expect(results[2]["errors"]?.arrayValue?.first?["statusCode"] == "NOT_FOUND")
            expectError(try await emu.rest("GET", "/sobjects/Account/\(one)"), 404, "ENTITY_IS_DELETED")
            expectError(try await emu.rest("GET", "/sobjects/Contact/\(two)"), 404, "ENTITY_IS_DELETED")
            #expect(try await emu.count("Account") == 3)
            #expect(try await emu.count("Contact") == 3)
        }
    }

    @Test func deleteAllOrNoneKeepsEverything() async throws {
        try await withEmulator { emu in
            let one = try await emu.create("Account", ["Name": "Keep me"])
            let initech = try await emu.id("Account", "External_Id__c", "INITECH-1")  // has a Case: restricted
            let reply = try await emu.rest("DELETE", "/composite/sobjects?ids=\(one),\(initech)&allOrNone=true")
            #expect(reply.status == 200)
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 2)
            #expect(results[0] == ["id": .string(one), "success": false, "errors": [Self.rolledBack]])
            #expect(results[1]["errors"]?.arrayValue?.first?["statusCode"] == "DELETE_FAILED")
            #expect(try await emu.record("Account", one)["Name"] == "Keep me")
            #expect(try await emu.count("Account") == 4)
        }
    }

    @Test func retrieveByIdsWithNullForMissing() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let globex = try await emu.id("Account", "External_Id__c", "GLOBEX-1")
            let deleted = try await emu.create("Account", ["Name": "Gone"])
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(deleted)").status == 204)
            let missing = unusedId(prefix: "001")
            let reply = try await emu.rest("GET", "/composite/sobjects/Account?ids=\(acme),\(missing),\(globex),\(deleted)&fields=Name")
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            try #require(results.count == 4)
            #expect(results[0] == ["attributes": ["type": "Account", "url": .string("/services/data/v62.0/sobjects/Account/\(acme)")],
                                   "Id": .string(acme), "Name": "Acme Corporation"])
            #expect(keys(results[0]) == ["attributes", "Id", "Name"])
            #expect(results[1] == .null)
            #expect(results[2]["Name"] == "Globex")
            #expect(results[3] == .null)

            // A retrieve is not a write.
            #expect(try await emu.stats()["requests"]?["writes"] == 2)
        }
    }
    @Test func retrieveByRequestBodyReadsUpTo2000() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let missing = unusedId(prefix: "001")
            let ids: [JSONValue] = [.string(acme)] + Array(repeating: .string(missing), count: 1999)
            let reply = try await emu.rest("POST", "/composite/sobjects/Account", json: ["ids": .array(ids), "fields": ["Name"]])
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json.arrayValue)
            #expect(results.count == 2000)
            #expect(results[0]["Name"] == "Acme Corporation")
            #expect(results[1999] == .null)

            let tooMany = try await emu.rest("POST", "/composite/sobjects/Account", json: ["ids": .array(ids + [.string(acme)]), "fields": ["Name"]])
            #expect(tooMany.json == restError("EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than 2000 records into this call"))
            // A URL's list stays at 200.
            let url = try await emu.rest("GET", "/composite/sobjects/Account?fields=Name&ids=" + Array(repeating: missing, count: 201).joined(separator: ","))
            #expect(url.json == restError("EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than 200 records into this call"))

            // Retrieves by request body inside a Composite are reads, not writes.
            let composite = try await emu.rest("POST", "/composite", json: ["compositeRequest": [
                ["method": "POST", "url": "/services/data/v62.0/composite/sobjects/Account", "referenceId": "r0",
                 "body": ["ids": [.string(acme)], "fields": ["Name"]]],
            ]])
            #expect(composite.json["compositeResponse"]?[0]?["body"]?[0]?["Name"] == "Acme Corporation", "\(composite.text)")
            #expect(try await emu.stats()["requests"]?["writes"] == 0)
        }
    }
}
