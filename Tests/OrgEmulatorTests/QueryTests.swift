import Foundation
import JSON
import Testing

/// `/query` and `/queryAll`: SOQL over the emulated records, paging, relationships and errors.
@Suite struct QueryTests {
    func query(_ emu: EmulatorHarness, _ soql: String, all: Bool = false, headers: [String: String] = [:]) async throws -> Reply {
        let encoded = soql.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try await emu.rest("GET", "/\(all ? "queryAll" : "query")?q=\(encoded)", headers: headers)
    }

    @Test func filtersOrdersAndSelectsParentFields() async throws {
        try await withEmulator { (emu) async throws in
            let reply = try await query(emu, "SELECT LastName, Account.Name, Account.Industry FROM Contact WHERE Account.Industry = 'Technology' ORDER BY LastName DESC")
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["totalSize"] == 2)
            #expect(reply.json["done"] == true)
            let records = try #require(reply.json["records"]?.arrayValue)
            #expect(records.map { $0["LastName"]?.stringValue ?? "" } == ["Runner", "Coyote"])
            #expect(records[0]["Account"]?["Name"] == "Acme Corporation")
            #expect(records[0]["Account"]?["attributes"]?["type"] == "Account")
            #expect(records[0]["attributes"]?["url"]?.stringValue?.hasPrefix("/services/data/v62.0/sobjects/Contact/003") == true)
        }
    }

    @Test func emptyLookupIsNullAndEveryFieldIsPresent() async throws {
        try await withEmulator { (emu) async throws in
            _ = try await emu.create("Contact", ["LastName": "Orphan"])
            let reply = try await query(emu, "SELECT FirstName, LastName, Account.Name FROM Contact WHERE LastName = 'orphan'")
            let record = try #require(reply.json["records"]?.arrayValue?.first)
            #expect(record["Account"] == .null)
            #expect(record["FirstName"] == .null)
            #expect(record.objectValue?.contains("FirstName") == true)
        }
    }

    /// An empty field is not stored; the answer still names it as the schema spells it, however
    /// the query spells it, at every level, and a parent's `attributes` carry the request's version.
    @Test func emptyFieldsAreSpelledAsTheSchemaSpellsThem() async throws {
        try await withEmulator { (emu) async throws in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            _ = try await emu.create("Contact", ["LastName": "Spelled", "AccountId": .string(acme)])
            let reply = try await query(emu, "select firstname, lastname, account.parentid, account.industry from contact where lastname = 'Spelled'")
            #expect(reply.status == 200, "\(reply.text)")
            let record = try #require(reply.json["records"]?.arrayValue?.first?.objectValue)
            #expect(record.keys == ["attributes", "FirstName", "LastName", "Account"])
            #expect(record["FirstName"] == .null)
            let account = try #require(record["Account"]?.objectValue)
            #expect(account.keys == ["attributes", "ParentId", "Industry"])
            #expect(account["ParentId"] == .null)
            #expect(account["Industry"] == "Technology")
            #expect(account["attributes"]?["url"]?.stringValue == "/services/data/v62.0/sobjects/Account/\(acme)")
            let whole = try await emu.rest("GET", "/sobjects/Account/\(acme)")
            #expect(whole.json["ParentId"] == .null)
            #expect(whole.json.objectValue?.contains("ParentId") == true)
        }
    }

    /// A polymorphic lookup's parent is shaped as its own object, not as the lookup's first target.
    @Test func aPolymorphicParentIsOfItsOwnObject() async throws {
        try await withEmulator { (emu) async throws in
            let opportunity = try #require(try await query(emu, "SELECT Id FROM Opportunity").json["records"]?.arrayValue?.first?["Id"]?.stringValue)
            _ = try await emu.create("Task", ["Subject": "Call about rockets", "WhatId": .string(opportunity)])
            let reply = try await query(emu, "SELECT Subject, What.Name FROM Task WHERE Subject = 'Call about rockets'")
            #expect(reply.status == 200, "\(reply.text)")
            let what = try #require(reply.json["records"]?.arrayValue?.first?["What"]?.objectValue)
            #expect(what["attributes"]?["type"] == "Opportunity")
            #expect(what["attributes"]?["url"]?.stringValue == "/services/data/v62.0/sobjects/Opportunity/\(opportunity)")
            #expect(what["Name"] == "Acme rockets")
        }
    }

    @Test func childSubqueriesAreNestedQueryResultsOrNull() async throws {
        try await withEmulator { (emu) async throws in
            let reply = try await query(emu, "SELECT Name, (SELECT LastName FROM Contacts ORDER BY LastName) FROM Account ORDER BY Name")
            let records = try #require(reply.json["records"]?.arrayValue)
            #expect(records.count == 3)
            let acme = records[0]["Contacts"]
            #expect(acme?["totalSize"] == 2)
            #expect(acme?["done"] == true)
            #expect(acme?["records"]?.arrayValue?.map { $0["LastName"]?.stringValue ?? "" } == ["Coyote", "Runner"])
            #expect(records[2]["Name"] == "Initech")
            #expect(records[2]["Contacts"] == .null)
        }
    }

    @Test func moreThanTwoHundredChildrenArePagedWithTheirOwnLocator() async throws {
        try await withEmulator { (emu) async throws in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            for start in stride(from: 0, to: 250, by: 200) {
                let records: [JSONValue] = (start..<min(250, start + 200)).map { index in
                    ["attributes": ["type": "Contact"], "LastName": .string(String(format: "Child %03d", index)), "AccountId": .string(acme)]
                }
                let reply = try await emu.rest("POST", "/composite/sobjects", json: ["records": .array(records)])
                #expect(reply.status == 200)
            }
            let reply = try await query(emu, "SELECT Name, (SELECT LastName FROM Contacts) FROM Account WHERE External_Id__c = 'ACME-1'")
            let children = try #require(reply.json["records"]?.arrayValue?.first?["Contacts"])
            #expect(children["totalSize"] == 252)
            #expect(children["done"] == false)
            #expect(children["records"]?.arrayValue?.count == 200)
            let next = try #require(children["nextRecordsUrl"]?.stringValue)
            let rest = try await emu.send("GET", next)
            #expect(rest.status == 200)
            #expect(rest.json["done"] == true)
            #expect(rest.json["records"]?.arrayValue?.count == 52)
        }
    }

    @Test func pagesFollowNextRecordsUrlWithTheBatchSizeHeader() async throws {
        try await withEmulator { (emu) async throws in
            let records: [JSONValue] = (0..<200).map { ["attributes": ["type": "Account"], "Name": .string("Paged \($0)")] }
            #expect(try await emu.rest("POST", "/composite/sobjects", json: ["records": .array(records)]).status == 200)
            #expect(try await emu.rest("POST", "/composite/sobjects", json: ["records": .array(records)]).status == 200)
            let first = try await query(emu, "SELECT Id FROM Account WHERE Name LIKE 'Paged%'", headers: ["Sforce-Query-Options": "batchSize=250"])
            #expect(first.json["totalSize"] == 400)
            #expect(first.json["done"] == false)
            #expect(first.json["records"]?.arrayValue?.count == 250)
            let locator = try #require(first.json["nextRecordsUrl"]?.stringValue)
            #expect(locator.range(of: #"^/services/data/v62\.0/query/01g[0-9A-Za-z]{15}-250$"#, options: .regularExpression) != nil)
            let second = try await emu.send("GET", locator)
            #expect(second.json["totalSize"] == 400)
            #expect(second.json["done"] == true)
            #expect(second.json["nextRecordsUrl"] == nil)
            let ids = (first.json["records"]!.arrayValue! + second.json["records"]!.arrayValue!).compactMap { $0["Id"]?.stringValue }
            #expect(Set(ids).count == 400)
            // As in an org, a page can be fetched again (a client retrying a lost answer).
            let again = try await emu.send("GET", locator)
            #expect(again.status == 200)
            #expect(again.json["records"] == second.json["records"])
            // A locator the org never gave, or past the end, is refused.
            for bad in ["/services/data/v62.0/query/01g000000000000AAA-250", locator.replacingOccurrences(of: "-250", with: "-400")] {
                let refused = try await emu.send("GET", bad)
                #expect(refused.status == 400)
                #expect(refused.json[0]?["errorCode"] == "INVALID_QUERY_LOCATOR")
            }
            // One cursor serves every page of a query: the locator keeps its id, only the position moves.
            #expect(try await emu.rest("POST", "/composite/sobjects", json: ["records": .array(records)]).status == 200)
            let small = try await query(emu, "SELECT Id FROM Account WHERE Name LIKE 'Paged%'", headers: ["Sforce-Query-Options": "batchSize=200"])
            let page2 = try #require(small.json["nextRecordsUrl"]?.stringValue)
            let middle = try await emu.send("GET", page2)
            let page3 = try #require(middle.json["nextRecordsUrl"]?.stringValue)
            #expect(page2.hasSuffix("-200") && page3.hasSuffix("-400"))
            #expect(page2.dropLast(4) == page3.dropLast(4), "\(page2) then \(page3)")
            // Read to the end, a cursor keeps its last page only (a lost answer is fetched again;
            // a finished 200,000-record query does not hold its ids for 15 minutes).
            let last = try await emu.send("GET", page3)
            #expect(last.json["done"] == true && last.json["records"]?.arrayValue?.count == 200)
            #expect(try await emu.send("GET", page3).json["records"] == last.json["records"])
            #expect(try await emu.send("GET", page2).json[0]?["errorCode"] == "INVALID_QUERY_LOCATOR")
            // A last page asked from past its locator leaves that locator served.
            let rerun = try await query(emu, "SELECT Id FROM Account WHERE Name LIKE 'Paged%'", headers: ["Sforce-Query-Options": "batchSize=200"])
            let againPage2 = try #require(rerun.json["nextRecordsUrl"]?.stringValue)
            let againPage3 = try #require(try await emu.send("GET", againPage2).json["nextRecordsUrl"]?.stringValue)
            let tail = try await emu.send("GET", againPage3.replacingOccurrences(of: "-400", with: "-450"))
            #expect(tail.json["done"] == true && tail.json["records"]?.arrayValue?.count == 150)
            #expect(try await emu.send("GET", againPage3).json["records"]?.arrayValue?.count == 200)
        }
    }

    @Test func queryAllSeesDeletedRecords() async throws {
        try await withEmulator { (emu) async throws in
            let id = try await emu.create("Account", ["Name": "Doomed"])
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(id)").status == 204)
            #expect(try await query(emu, "SELECT Id FROM Account WHERE Name = 'Doomed'").json["totalSize"] == 0)
            let all = try await query(emu, "SELECT Id, IsDeleted FROM Account WHERE Name = 'Doomed'", all: true)
            #expect(all.json["totalSize"] == 1)
            #expect(all.json["records"]?[0]?["IsDeleted"] == true)
        }
    }

    @Test func semiJoinsCountAndAggregates() async throws {
        try await withEmulator { (emu) async throws in
            let semi = try await query(emu, "SELECT Name FROM Account WHERE Id IN (SELECT AccountId FROM Contact WHERE LastName = 'Scorpio')")
            #expect(semi.json["records"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Globex"])
            let anti = try await query(emu, "SELECT Name FROM Account WHERE Id NOT IN (SELECT AccountId FROM Contact) ORDER BY Name")
            #expect(anti.json["records"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Initech"])
            let count = try await query(emu, "SELECT COUNT() FROM Contact")
            #expect(count.json == ["totalSize": 3, "done": true, "records": []])
            let aggregate = try await query(emu, "SELECT MAX(NumberOfEmployees), COUNT(Id) total FROM Account")
            #expect(aggregate.json["records"]?[0] == ["attributes": ["type": "AggregateResult"], "expr0": 1200, "total": 3])
        }
    }

    @Test func dateLiteralsUseTheEmulatorClock() async throws {
        try await withEmulator { (emu) async throws in
            #expect(try await query(emu, "SELECT Id FROM Account WHERE CreatedDate = TODAY").json["totalSize"] == 3)
            #expect(try await emu.send("POST", "/emulator/clock", json: ["advanceSeconds": 259200], auth: .none).status == 200)
            #expect(try await query(emu, "SELECT Id FROM Account WHERE CreatedDate = TODAY").json["totalSize"] == 0)
            #expect(try await query(emu, "SELECT Id FROM Account WHERE CreatedDate = LAST_N_DAYS:5").json["totalSize"] == 3)
        }
    }

    @Test func errorsHaveSalesforceShapes() async throws {
        try await withEmulator { (emu) async throws in
            let malformed = try await query(emu, "SELECT Id FROM Account WHERE")
            #expect(malformed.status == 400)
            #expect(malformed.json == [["message": "\nSELECT Id FROM Account WHERE\n                            ^\nERROR at Row:1:Column:29\nunexpected token: <EOF>",
                                        "errorCode": "MALFORMED_QUERY"]])
            let field = try await query(emu, "SELECT Nme FROM Account")
            #expect(field.json[0]?["errorCode"] == "INVALID_FIELD")
            #expect(field.json[0]?["message"]?.stringValue?.contains("ERROR at Row:1:Column:8\nNo such column 'Nme' on entity 'Account'.") == true)
            let type = try await query(emu, "SELECT Id FROM Acount")
            #expect(type.json[0]?["errorCode"] == "INVALID_TYPE")
            #expect(type.json[0]?["message"]?.stringValue?.contains("sObject type 'Acount' is not supported.") == true)
            let relationship = try await query(emu, "SELECT Id, (SELECT Id FROM Contactz) FROM Account")
            #expect(relationship.json[0]?["errorCode"] == "INVALID_TYPE")
            let parent = try await query(emu, "SELECT Acount.Name FROM Contact")
            #expect(parent.json[0]?["errorCode"] == "INVALID_FIELD")
            let missing = try await emu.rest("GET", "/query")
            #expect(missing.status == 400)
        }
    }

    @Test func changeFeedsListUpdatedAndDeletedIds() async throws {
        try await withEmulator { (emu) async throws in
            #expect(try await emu.send("POST", "/emulator/clock", json: ["advanceSeconds": 3600], auth: .none).status == 200)
            let kept = try await emu.create("Account", ["Name": "Kept"])
            let gone = try await emu.create("Account", ["Name": "Gone"])
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(gone)").status == 204)
            let window = "start=2000-01-01T00:00:00Z&end=2199-01-01T00:00:00Z"
            let updated = try await emu.rest("GET", "/sobjects/Account/updated/?\(window)")
            #expect(updated.json["ids"]?.arrayValue?.contains(.string(kept)) == true)
            #expect(updated.json["ids"]?.arrayValue?.contains(.string(gone)) == false)
            let deleted = try await emu.rest("GET", "/sobjects/Account/deleted/?\(window)")
            #expect(deleted.json["deletedRecords"]?.arrayValue?.map { $0["id"]?.stringValue ?? "" } == [gone])
        }
    }
}
