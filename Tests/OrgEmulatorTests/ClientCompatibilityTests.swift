import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import Testing

/// What real clients other than simple-salesforce read first (issue 17): their default API
/// versions (CumulusCI 67.0, amaxa 52.0), `limits/recordCount`, the Organization record's fields,
/// and `Location` on an upsert that creates.
@Suite struct ClientCompatibilityTests {
    @Test(arguments: ["31.0", "52.0", "59.0", "67.0"])
    func everyVersionACurrentOrgServesIsServed(version: String) async throws {
        try await withEmulator { emu in
            let reply = try await emu.send("GET", "/services/data/v\(version)/query?q=SELECT+Id+FROM+Account")
            #expect(reply.status == 200, "v\(version): \(reply.text)")
            #expect(try await emu.send("GET", "/services/data/v\(version)/sobjects/Account/describe").status == 200)
        }
    }

    @Test func versionsOutsideTheRangeAreNotFound() async throws {
        try await withEmulator { emu in
            let tooOld = try await emu.send("GET", "/services/data/v30.0/query?q=SELECT+Id+FROM+Account")
            let tooNew = try await emu.send("GET", "/services/data/v99.0/query?q=SELECT+Id+FROM+Account")
            #expect(tooOld.status == 404 && tooNew.status == 404)
        }
    }

    @Test func recordCountAnswersPerObject() async throws {
        try await withEmulator { emu in
            let accounts = try await emu.count("Account")
            let contacts = try await emu.count("Contact")
            let reply = try await emu.rest("GET", "/limits/recordCount?sObjects=Account,contact")
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json == ["sObjects": [["count": .integer(Int64(accounts)), "name": "Account"],
                                                ["count": .integer(Int64(contacts)), "name": "Contact"]]])
            let all = try await emu.rest("GET", "/limits/recordCount")
            #expect(all.json["sObjects"]?.arrayValue?.contains(["count": .integer(Int64(accounts)), "name": "Account"]) == true)
            #expect(try await emu.rest("GET", "/limits/recordCount?sObjects=Nope").json[0]?["errorCode"] == "INVALID_TYPE")
            #expect(try await emu.rest("GET", "/limits").json["DailyApiRequests"] != nil, "/limits is still the limits")
        }
    }

    @Test func theOrganizationRecordHasWhatClientsRead() async throws {
        try await withEmulator { emu in
            let soql = "SELECT Id, Name, OrganizationType, IsSandbox, InstanceName, NamespacePrefix, TrialExpirationDate FROM Organization"
            let reply = try await emu.rest("GET", "/query?q=" + soql.replacingOccurrences(of: " ", with: "+"))
            #expect(reply.status == 200, "\(reply.text)")
            let organization = try #require(reply.json["records"]?[0])
            #expect(organization["InstanceName"] == "CS1")
            #expect(organization["NamespacePrefix"] == .null)
            #expect(organization["TrialExpirationDate"] == .null)
            #expect(organization["IsSandbox"] == true)
        }
    }

    @Test func anUpsertThatCreatesSaysWhere() async throws {
        try await withEmulator { emu in
            let created = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-1", json: ["Name": "New"])
            #expect(created.status == 201)
            let id = try #require(created.json["id"]?.stringValue)
            #expect(created.header("Location") == "/services/data/v62.0/sobjects/Account/\(id)")
            let updated = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-1", json: ["Name": "Newer"])
            #expect(updated.status == 200)
            #expect(updated.header("Location") == nil)
        }
    }
}
