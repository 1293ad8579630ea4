import Foundation
import JSON
import Testing

/// What deleting a parent does, from the seed's relationships: cascade, restrict, or clear.
@Suite struct DeleteSemanticsTests {
    @Test func deletingAnAccountCascadesToContactsAndOpportunities() async throws {
        try await withEmulator { emu in
            let before = try await emu.counts()
            #expect(before["Account"] == 3)
            #expect(before["Contact"] == 3)
            #expect(before["Opportunity"] == 1)

            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let wile = try await emu.id("Contact", "Email", "wile@acme.example")
            let road = try await emu.id("Contact", "Email", "road@acme.example")
            let hank = try await emu.id("Contact", "Email", "hank@globex.example")
            let opportunities = try await emu.liveIds("Opportunity")
            try #require(opportunities.count == 1)
            let order = try await emu.id("Order__c", "Order_Number__c", "ORD-0001")
            #expect(try await emu.record("Order__c", order)["Account__c"]?.stringValue == acme)

            let reply = try await emu.rest("DELETE", "/sobjects/Account/\(acme)")
            #expect(reply.status == 204, "\(reply.text)")

            let after = try await emu.counts()
            #expect(after["Account"] == 2)
            #expect(after["Contact"] == 1)
            #expect(after["Opportunity"] == nil)
            #expect(after["Order__c"] == 1, "a plain lookup keeps the child")
            #expect(after["Order_Line__c"] == 2)

            for (type, id) in [("Contact", wile), ("Contact", road), ("Opportunity", opportunities[0])] {
                let gone = try await emu.rest("GET", "/sobjects/\(type)/\(id)")
                #expect(gone.status == 404)
                #expect(gone.json == restError("ENTITY_IS_DELETED", "entity is deleted", fields: []), "\(type) \(id)")
            }
            #expect(try await emu.record("Contact", hank)["LastName"] == "Scorpio")
            #expect(try await emu.liveIds("Contact") == [hank])
            // The order's lookup to the deleted account is cleared.
            #expect(try await emu.record("Order__c", order)["Account__c"] == .null)
        }
    }

    @Test func restrictedDeleteRefusesAndDeletesNothing() async throws {
        try await withEmulator { emu in
            let initech = try await emu.id("Account", "External_Id__c", "INITECH-1")
            let cases = try await emu.liveIds("Case")
            try #require(cases.count == 1)
            let before = try await emu.counts()

            let reply = try await emu.rest("DELETE", "/sobjects/Account/\(initech)")
            #expect(reply.status == 400)
            expectError(reply, 400, "DELETE_FAILED")
            let error = reply.json.arrayValue?.first
            #expect(error?["fields"] == [])
            #expect(error?["message"]?.stringValue?.contains(cases[0]) == true, "\(reply.text)")

            #expect(try await emu.counts() == before)
            #expect(try await emu.record("Account", initech)["Name"] == "Initech")
            #expect(try await emu.record("Case", cases[0])["AccountId"]?.stringValue == initech)

            // Once the case is gone the account can be deleted.
            #expect(try await emu.rest("DELETE", "/sobjects/Case/\(cases[0])").status == 204)
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(initech)").status == 204)
            #expect(try await emu.count("Account") == 2)
        }
    }

    @Test func restrictedDeleteRollsBackCascadesAlreadyDone() async throws {
        try await withEmulator { emu in
            // Acme's contacts and opportunity cascade before its new case refuses the delete:
            // the whole delete is rolled back.
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            _ = try await emu.create("Case", ["Subject": "Anvil fell", "AccountId": .string(acme)])
            let before = try await emu.counts()
            expectError(try await emu.rest("DELETE", "/sobjects/Account/\(acme)"), 400, "DELETE_FAILED")
            #expect(try await emu.counts() == before)
        }
    }

    @Test func deletingAContactClearsTheCaseLookup() async throws {
        try await withEmulator { emu in
            let hank = try await emu.id("Contact", "Email", "hank@globex.example")
            let caseId = try await emu.create("Case", ["Subject": "Volcano lair", "ContactId": .string(hank)])
            let createdCase = try await emu.record("Case", caseId)
            #expect(createdCase["ContactId"]?.stringValue == hank)
            #expect(createdCase["Status"] == "New", "picklist default applied")

            try await emu.advanceClock(120)
            #expect(try await emu.rest("DELETE", "/sobjects/Contact/\(hank)").status == 204)

            let after = try await emu.record("Case", caseId)
            #expect(after["ContactId"] == .null)
            #expect(after["Subject"] == "Volcano lair")
            let modstamp = try #require(after["SystemModstamp"]?.stringValue)
            #expect(modstamp > (createdCase["SystemModstamp"]?.stringValue ?? ""), "clearing the lookup is a change")
            #expect(try await emu.count("Case") == 2)
            #expect(try await emu.count("Contact") == 2)
        }
    }

    @Test func deletingAnOrderDeletesItsMasterDetailLines() async throws {
        try await withEmulator { emu in
            let order = try await emu.id("Order__c", "Order_Number__c", "ORD-0001")
            let lines = try await emu.liveIds("Order_Line__c")
            #expect(lines.count == 2)
            #expect(try await emu.count("Order_Line__c") == 2)

            #expect(try await emu.rest("DELETE", "/sobjects/Order__c/\(order)").status == 204)

            #expect(try await emu.count("Order__c") == 0)
            #expect(try await emu.count("Order_Line__c") == 0)
            for line in lines {
                expectError(try await emu.rest("GET", "/sobjects/Order_Line__c/\(line)"), 404, "ENTITY_IS_DELETED")
            }
            // Reported by the deleted feed, with the deletion time.
            let feed = try await emu.rest("GET", "/sobjects/Order_Line__c/deleted/?start=2000-01-01T00:00:00Z&end=2199-12-31T00:00:00Z")
            #expect(feed.status == 200)
            let deleted = (feed.json["deletedRecords"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            #expect(Set(deleted) == Set(lines))
            #expect((feed.json["deletedRecords"]?.arrayValue ?? []).allSatisfy { isSalesforceTimestamp($0["deletedDate"]?.stringValue) })
        }
    }

    @Test func masterDetailChildNeedsItsMaster() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Order_Line__c", json: ["Product__c": "Loose part"])
            #expect(reply.json == restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Order__c]", fields: ["Order__c"]))
        }
    }
}
