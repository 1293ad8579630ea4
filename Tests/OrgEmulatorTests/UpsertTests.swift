import Foundation
import JSON
import Testing

/// Upsert and GET by external id, and by `idLookup` fields such as Contact.Email.
@Suite struct UpsertTests {
    @Test func upsertCreatesThenUpdates() async throws {
        try await withEmulator { emu in
            let first = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-1", json: ["Name": "Fresh"])
            #expect(first.status == 201, "\(first.text)")
            let id = try #require(first.json["id"]?.stringValue)
            #expect(first.json == ["id": .string(id), "success": true, "errors": [], "created": true])
            #expect(id.hasPrefix("001") && hasValidChecksum(id))

            let second = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-1", json: ["Name": "Refreshed"])
            #expect(second.status == 200, "\(second.text)")
            #expect(second.json == ["id": .string(id), "success": true, "errors": [], "created": false])

            let record = try await emu.record("Account", id)
            #expect(record["Name"] == "Refreshed")
            #expect(record["External_Id__c"] == "NEW-1")
            #expect(try await emu.count("Account") == 4)
        }
    }

    @Test func upsertUpdatesASeedRecord() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let reply = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/ACME-1", json: ["NumberOfEmployees": 1300])
            #expect(reply.status == 200)
            #expect(reply.json["id"]?.stringValue == acme)
            #expect(reply.json["created"] == false)
            let record = try await emu.record("Account", acme)
            #expect(record["NumberOfEmployees"] == 1300)
            #expect(record["Name"] == "Acme Corporation")
        }
    }

    @Test func upsertValidatesLikeACreate() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/NEW-2", json: ["Industry": "Energy"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Name]", fields: ["Name"]))
            #expect(try await emu.rest("GET", "/sobjects/Account/External_Id__c/NEW-2").status == 404)
        }
    }

    @Test func upsertOnAFieldThatIsNotAnExternalIdIsNotFound() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("PATCH", "/sobjects/Account/Name/Globex", json: ["Industry": "Banking"])
            expectError(reply, 404, "NOT_FOUND")
            let unknown = try await emu.rest("PATCH", "/sobjects/Account/Nope__c/1", json: ["Name": "x"])
            expectError(unknown, 404, "NOT_FOUND")
        }
    }

    @Test func upsertByIdLookupFieldWithTwoMatchesIsMultipleChoices() async throws {
        try await withEmulator { emu in
            let first = try await emu.create("Contact", ["LastName": "Twin", "Email": "twin@example.com"])
            let second = try await emu.create("Contact", ["LastName": "Twin", "Email": "twin@example.com"])
            let reply = try await emu.rest("PATCH", "/sobjects/Contact/Email/twin@example.com", json: ["LastName": "Which"])
            #expect(reply.status == 300, "\(reply.text)")
            // A JSON array of the matching records' URLs, as strings.
            let urls = (reply.json.arrayValue ?? []).compactMap(\.stringValue)
            #expect(Set(urls) == Set([first, second].map { "/services/data/v62.0/sobjects/Contact/\($0)" }), "\(reply.text)")
            // Nothing was written.
            #expect(try await emu.record("Contact", first)["LastName"] == "Twin")
            #expect(try await emu.record("Contact", second)["LastName"] == "Twin")
            #expect(try await emu.count("Contact") == 5)

            let get = try await emu.rest("GET", "/sobjects/Contact/Email/twin@example.com")
            #expect(get.status == 300)
            #expect(Set((get.json.arrayValue ?? []).compactMap(\.stringValue)) == Set(urls))
        }
    }

    @Test func upsertByIdLookupFieldWithOneMatchUpdates() async throws {
        try await withEmulator { emu in
            let wile = try await emu.id("Contact", "Email", "wile@acme.example")
            let reply = try await emu.rest("PATCH", "/sobjects/Contact/Email/wile@acme.example", json: ["Phone": "555-0100"])
            #expect(reply.status == 200)
            #expect(reply.json == ["id": .string(wile), "success": true, "errors": [], "created": false])
            #expect(try await emu.record("Contact", wile)["Phone"] == "555-0100")
        }
    }

    @Test func getByExternalId() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("GET", "/sobjects/Account/External_Id__c/GLOBEX-1")
            #expect(reply.status == 200)
            let id = try #require(reply.json["Id"]?.stringValue)
            #expect(reply.json["Name"] == "Globex")
            #expect(reply.json["attributes"] == ["type": "Account", "url": .string("/services/data/v62.0/sobjects/Account/\(id)")])
            #expect(try await emu.record("Account", id) == reply.json)

            let order = try await emu.rest("GET", "/sobjects/Order__c/Order_Number__c/ORD-0001")
            #expect(order.json["Name"] == "Order 1")

            let missing = try await emu.rest("GET", "/sobjects/Account/External_Id__c/NOPE-1")
            #expect(missing.status == 404)
            #expect(missing.json == restError("NOT_FOUND", "The requested resource does not exist"))
        }
    }

    @Test func externalIdValuesAreURLDecoded() async throws {
        try await withEmulator { emu in
            let created = try await emu.rest("PATCH", "/sobjects/Account/External_Id__c/EXT%201%2FA", json: ["Name": "Encoded"])
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(created.json["id"]?.stringValue)
            #expect(try await emu.record("Account", id)["External_Id__c"] == "EXT 1/A")
            let fetched = try await emu.rest("GET", "/sobjects/Account/External_Id__c/EXT%201%2FA")
            #expect(fetched.status == 200)
            #expect(fetched.json["Id"]?.stringValue == id)
        }
    }

    @Test func upsertKeyedOnIdField() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Via Id"])
            let updated = try await emu.rest("PATCH", "/sobjects/Account/Id/\(id)", json: ["Name": "Via Id again"])
            #expect(updated.status == 200)
            #expect(updated.json == ["id": .string(id), "success": true, "errors": [], "created": false])
            #expect(try await emu.record("Account", id)["Name"] == "Via Id again")
        }
    }
}

/// `POST /sobjects/{Type}/Id`: insert keyed on Id, and stats listing every object.
@Suite struct InsertByIdTests {
    @Test func postToTheIdPathCreates() async throws {
        try await withEmulator { (emu) async throws in
            let reply = try await emu.rest("POST", "/sobjects/Account/Id", json: ["Name": "Keyed on Id"])
            #expect(reply.status == 201, "\(reply.text)")
            let id = try #require(reply.json["id"]?.stringValue)
            #expect(try await emu.record("Account", id)["Name"] == "Keyed on Id")
            // Objects with no records are listed with 0.
            #expect(try await emu.stats()["records"]?["Organization"] == 1)
            #expect(try await emu.send("DELETE", "/services/data/v62.0/sobjects/Case/\(try await emu.liveIds("Case")[0])").status == 204)
            #expect(try await emu.stats()["records"]?["Case"] == 0)
        }
    }
}
