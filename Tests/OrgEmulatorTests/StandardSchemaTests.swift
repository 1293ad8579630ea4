import Foundation
import JSON
import OrgEmulator
import OrgEmulatorTesting
import Testing

/// The schema reads like an org's: standard fields from the catalog (`"standard": true`), an owner
/// on every record, record types with `recordTypeInfos`, and Contact's compound Name.
@Suite struct StandardSchemaTests {
    static func query(_ emu: EmulatorHarness, _ soql: String) async throws -> Reply {
        try await emu.rest("GET", "/query?q=" + (soql.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? soql))
    }

    @Test func recordsHaveTheirCreatorAsOwner() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Owned"])
            let reply = try await Self.query(emu, "SELECT Owner.Name, Owner.Username, CreatedBy.Name FROM Account WHERE Id = '\(id)'")
            #expect(reply.status == 200, "\(reply.text)")
            let record = try #require(reply.json["records"]?[0])
            #expect(record["Owner"]?["Username"] == .string(SampleOrg.username))
            #expect(record["Owner"]?["Name"] == record["CreatedBy"]?["Name"])
            let owner = try #require(try await emu.record("Account", id)["OwnerId"]?.stringValue)
            #expect(owner.hasPrefix("005"))
            // Another owner must be a user.
            let refused = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["OwnerId": .string(id)])
            #expect(refused.status == 400, "\(refused.text)")
            // The details of a master-detail have no owner of their own.
            let describe = try await emu.rest("GET", "/sobjects/Order_Line__c/describe").json
            #expect(!(describe["fields"]?.arrayValue ?? []).contains { $0["name"] == "OwnerId" })
        }
    }

    @Test func recordTypesAreRecordsDescribedAndDefaulted() async throws {
        try await withEmulator { emu in
            let types = try await Self.query(emu, "SELECT Id, DeveloperName, Name FROM RecordType WHERE SobjectType = 'Opportunity' ORDER BY DeveloperName")
            let records = types.json["records"]?.arrayValue ?? []
            #expect(records.map { $0["DeveloperName"] } == ["New_Business", "Renewal"], "\(types.text)")
            let newBusiness = try #require(records.first?["Id"]?.stringValue)
            let renewal = try #require(records.last?["Id"]?.stringValue)

            let describe = try await emu.rest("GET", "/sobjects/Opportunity/describe").json
            let infos = describe["recordTypeInfos"]?.arrayValue ?? []
            #expect(infos.map { $0["developerName"] } == ["New_Business", "Renewal", "Master"])
            #expect(infos.first?["defaultRecordTypeMapping"] == true && infos.last?["master"] == true)
            #expect(infos.last?["recordTypeId"] == "012000000000000AAA")
            // An object without record types has Master only, as the default.
            let account = try await emu.rest("GET", "/sobjects/Account/describe").json
            #expect(account["recordTypeInfos"]?.arrayValue?.map { $0["developerName"] } == ["Master"])

            let opportunity: JSONValue = ["Name": "Deal", "StageName": "Prospecting", "CloseDate": "2026-12-01"]
            let defaulted = try await emu.create("Opportunity", opportunity)
            #expect(try await emu.record("Opportunity", defaulted)["RecordTypeId"] == .string(newBusiness))
            var chosen = opportunity.objectValue!
            chosen["RecordTypeId"] = .string(renewal)
            let renewed = try await emu.create("Opportunity", .object(chosen))
            let read = try await Self.query(emu, "SELECT RecordType.DeveloperName FROM Opportunity WHERE Id = '\(renewed)'")
            #expect(read.json["records"]?[0]?["RecordType"]?["DeveloperName"] == "Renewal", "\(read.text)")
            // A record type of another object is refused, naming the field.
            let other = try await emu.create("Opportunity", opportunity)
            let caseType = try await emu.rest("PATCH", "/sobjects/Opportunity/\(other)", json: ["RecordTypeId": "012000000000000AAA"])
            expectError(caseType, 400, "INVALID_CROSS_REFERENCE_KEY")
            #expect(try await emu.rest("POST", "/sobjects/RecordType", json: ["Name": "X"]).status == 400)
        }
    }

    @Test func contactNameIsCompoundAndSetByTheOrg() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Contact", ["FirstName": "Ada", "LastName": "Lovelace"])
            #expect(try await emu.record("Contact", id)["Name"] == "Ada Lovelace")
            #expect(try await emu.rest("PATCH", "/sobjects/Contact/\(id)", json: ["FirstName": .null]).status == 204)
            #expect(try await emu.record("Contact", id)["Name"] == "Lovelace")
            let refused = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "X", "Name": "Y X"])
            expectError(refused, 400, "INVALID_FIELD_FOR_INSERT_UPDATE")
            let fields = try await emu.rest("GET", "/sobjects/Contact/describe").json["fields"]?.arrayValue ?? []
            let name = try #require(fields.first { $0["name"] == "Name" })
            #expect(name["createable"] == false && name["nameField"] == true)
            #expect(fields.first { $0["name"] == "FirstName" }?["compoundFieldName"] == "Name")
            // The seed's contacts have theirs too.
            let seeded = try await Self.query(emu, "SELECT Name FROM Contact WHERE LastName = 'Coyote'")
            #expect(seeded.json["records"]?[0]?["Name"] == "Wile Coyote", "\(seeded.text)")
        }
    }

    @Test func standardFieldsComeFromTheCatalog() async throws {
        try await withEmulator { emu in
            let fields = try await emu.rest("GET", "/sobjects/Account/describe").json["fields"]?.arrayValue ?? []
            let byName = Dictionary(fields.compactMap { field in field["name"]?.stringValue.map { ($0, field) } }, uniquingKeysWith: { $1 })
            #expect(byName["BillingCity"]?["type"] == "string" && byName["Website"]?["type"] == "url")
            #expect(byName["Rating"]?["picklistValues"]?.arrayValue?.count == 3)
            // What the seed declares wins: its Industry keeps the seed's four values.
            #expect(byName["Industry"]?["picklistValues"]?.arrayValue?.count == 4)
            let id = try await emu.create("Account", ["Name": "Full", "BillingCity": "Lyon", "Rating": "Hot", "Website": "https://example.com"])
            #expect(try await emu.record("Account", id)["BillingCity"] == "Lyon")
            // Task.WhatId reaches the seed's objects only (Account, Opportunity, Case).
            let task = try await emu.rest("GET", "/sobjects/Task/describe").json["fields"]?.arrayValue ?? []
            #expect(task.first { $0["name"] == "Priority" }?["defaultValue"] == "Normal")
        }
    }

    @Test func aStandardFieldTheCatalogLacksIsALocatedError() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let unknownField = try SeedTests.writeSeed("""
            {"objects": [{"name": "Account", "keyPrefix": "001", "fields": [{"name": "Colour", "standard": true}]}]}
            """, in: directory)
        let message = try #require(SeedTests.startError(seedPath: unknownField))
        #expect(message.contains("objects[0].fields[0].standard") && message.contains("no standard field Colour"), "\(message)")
        let unknownObject = try SeedTests.writeSeed("""
            {"objects": [{"name": "Widget__c", "keyPrefix": "a09", "standard": true}]}
            """, in: directory, name: "object.json")
        let objectMessage = try #require(SeedTests.startError(seedPath: unknownObject))
        #expect(objectMessage.contains("objects[0].standard"), "\(objectMessage)")
        let one = try SeedTests.writeSeed("""
            {"objects": [{"name": "Task", "keyPrefix": "00T", "fields": [{"name": "WhatId", "standard": true, "referenceTo": "Task"}]}]}
            """, in: directory, name: "one.json")
        #expect(SeedTests.startError(seedPath: one) == nil, "a standard field whose keys the seed overrides")
    }
}
