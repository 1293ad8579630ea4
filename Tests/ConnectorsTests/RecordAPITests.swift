import Connectors
import Foundation
import JSON
import Testing

/// Single-record CRUD, upsert, describe with its cache, limits, and the org's typed errors.
@Suite struct RecordAPITests {
    @Test func createRetrieveUpdateDelete() async throws {
        try await withClient { org, client in
            let id = try await client.create("Account", ["Name": "Wayne Enterprises", "Industry": "Technology", "NumberOfEmployees": 500])
            #expect(id.count == 18)
            #expect(id.hasPrefix("001"))
            let record = try await client.retrieve("Account", id: id)
            #expect(record["Name"] == "Wayne Enterprises")
            #expect(record["NumberOfEmployees"]?.integerValue == 500)
            #expect(record["attributes"]?["type"] == "Account")

            let some = try await client.retrieve("Account", id: id, fields: ["Name", "Industry"])
            #expect(some["Name"] == "Wayne Enterprises")
            #expect(some["Industry"] == "Technology")
            #expect(some["NumberOfEmployees"] == nil)

            try await client.update("Account", id: id, ["Name": "Wayne Enterprises Ltd", "Industry": .null])
            let updated = try await client.retrieve("Account", id: id)
            #expect(updated["Name"] == "Wayne Enterprises Ltd")
            #expect(updated["Industry"] == .null)

            try await client.delete("Account", id: id)
            let gone = await caught { try await client.retrieve("Account", id: id) }
            let error = try #require(gone as? OrgAPIError)
            #expect(error.status == 404)
            #expect(error.errorCode == "ENTITY_IS_DELETED")
            #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            #expect(await client.usage().byKind["sobject"] == 7)
        }
    }

    @Test func upsertCreatesThenUpdates() async throws {
        try await withClient { org, client in
            let created = try await client.upsert("Account", externalIdField: "External_Id__c", value: "WAYNE-1", ["Name": "Wayne"])
            #expect(created.created)
            let again = try await client.upsert("Account", externalIdField: "External_Id__c", value: "WAYNE-1", ["Name": "Wayne 2"])
            #expect(!again.created)
            #expect(again.id == created.id)
            #expect(try await client.retrieve("Account", id: created.id)["Name"] == "Wayne 2")
            // A seeded record, by its external id.
            let acme = try await client.upsert("Account", externalIdField: "External_Id__c", value: "ACME-1", ["NumberOfEmployees": 1300])
            #expect(!acme.created)
            #expect(try await client.retrieve("Account", id: acme.id)["Name"] == "Acme Corporation")
            // Values that need escaping in a URL path.
            let odd = "ODD/1 2?x#y%z"
            let first = try await client.upsert("Account", externalIdField: "External_Id__c", value: odd, ["Name": "Odd"])
            #expect(first.created)
            let second = try await client.upsert("Account", externalIdField: "External_Id__c", value: odd, ["Name": "Odd again"])
            #expect(!second.created)
            #expect(second.id == first.id)
            #expect(try await client.retrieve("Account", id: first.id)["External_Id__c"] == .string(odd))
            // An idLookup field that is not an external id (Contact.Email).
            let contact = try await client.upsert("Contact", externalIdField: "Email", value: "wile@acme.example", ["Phone": "555-0100"])
            #expect(!contact.created)
        }
    }

    @Test func orgErrorsCarryCodeMessageAndFields() async throws {
        try await withClient { org, client in
            let missing = try #require(await caught { try await client.create("Account", ["Industry": "Energy"]) } as? OrgAPIError)
            #expect(missing.status == 400)
            #expect(missing.errorCode == "REQUIRED_FIELD_MISSING")
            #expect(missing.fields == ["Name"])
            #expect(missing.message.contains("Name"))
            #expect("\(missing)".contains("REQUIRED_FIELD_MISSING"))

            let long = try #require(await caught { try await client.create("Account", ["Name": .string(String(repeating: "x", count: 256))]) }
                as? OrgAPIError)
            #expect(long.errorCode == "STRING_TOO_LONG")
            #expect(long.fields == ["Name"])

            let picklist = try #require(await caught {
                try await client.create("Opportunity", ["Name": "Deal", "StageName": "Dreaming", "CloseDate": "2027-01-01"])
            } as? OrgAPIError)
            #expect(picklist.errorCode == "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST")
            #expect(picklist.fields == ["StageName"])

            let duplicate = try #require(await caught { try await client.create("Account", ["Name": "Dup", "External_Id__c": "ACME-1"]) }
                as? OrgAPIError)
            #expect(duplicate.errorCode == "DUPLICATE_VALUE")

            let unknownField = try #require(await caught { try await client.create("Account", ["Name": "X", "Bogus__c": 1]) } as? OrgAPIError)
            #expect(unknownField.errorCode == "INVALID_FIELD")

            let malformed = try #require(await caught { try await client.retrieve("Account", id: "not-an-id") } as? OrgAPIError)
            #expect(malformed.errorCode == "MALFORMED_ID")

            let restricted = try #require(await caught {
                try await client.delete("Account", id: try await acmeLikeId(client, "Initech"))
            } as? OrgAPIError)
            #expect(restricted.errorCode == "DELETE_FAILED")
            #expect(await client.usage().retries == 0)
        }
    }

    func acmeLikeId(_ client: SalesforceClient, _ name: String) async throws -> String {
        let records = try await collect(client.query("SELECT Id FROM Account WHERE Name = '\(name)'"))
        return try #require(records.first?["Id"]?.stringValue)
    }

    @Test func describeIsFetchedOncePerObject() async throws {
        try await withClient { org, client in
            let first = try await client.describe("Account")
            #expect(first["name"] == "Account")
            #expect(first["keyPrefix"] == "001")
            let fields = (first["fields"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            #expect(fields.contains("External_Id__c"))
            let children = (first["childRelationships"]?.arrayValue ?? []).compactMap { $0["relationshipName"]?.stringValue }
            #expect(children.contains("Contacts"))
            #expect(await client.usage().byKind["describe"] == 1)

            let second = try await client.describe("Account")
            let third = try await client.describe("account")
            #expect(second == first)
            #expect(third == first)
            #expect(await client.usage().byKind["describe"] == 1)
            #expect(await org.received("describe") == 1)

            _ = try await client.describe("Contact")
            #expect(await client.usage().byKind["describe"] == 2)
            // A failed describe is not cached.
            let unknown = await caught { try await client.describe("Nope__c") }
            #expect((unknown as? OrgAPIError)?.status == 404)
            _ = await caught { try await client.describe("Nope__c") }
            #expect(await client.usage().byKind["describe"] == 4)
        }
    }

    @Test func limitsAndUsage() async throws {
        try await withClient { org, client in
            let limits = try await client.limits()
            #expect(limits["DailyApiRequests"]?["Max"]?.integerValue == 15000)
            let usage = await client.usage()
            #expect(usage.byKind == ["limits": 1])
            #expect(usage.requests == 1)
            #expect(usage.limitInfo == "api-usage=1/15000")
            #expect(usage.dailyUsage?.used == 1)
            #expect(usage.dailyUsage?.max == 15000)
        }
    }

    @Test func rawSendReachesAnyEndpoint() async throws {
        try await withClient { org, client in
            let response = try await client.send(OrgRequest(method: "GET", path: client.apiPath + "/sobjects/Account/updated",
                                                            query: [("start", "2000-01-01T00:00:00+00:00"), ("end", "2199-01-01T00:00:00+00:00")],
                                                            kind: "changes"))
            #expect(response.status == 200)
            #expect(try response.json()["ids"]?.arrayValue?.count == 3)
            #expect(await client.usage().byKind["changes"] == 1)
        }
    }
}
