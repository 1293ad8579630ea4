import Foundation
import JSON
import Testing

/// sObject create / get / update / delete and id handling.
@Suite struct SObjectTests {
    static let accountFields = ["Id", "IsDeleted", "CreatedDate", "CreatedById", "LastModifiedDate", "LastModifiedById",
                                "SystemModstamp", "Name", "Description", "Industry", "NumberOfEmployees", "AnnualRevenue",
                                "External_Id__c", "ParentId",
                                // The standard fields the sample seed does not declare (`"standard": true`), and the owner.
                                "AccountNumber", "Site", "Type", "Rating", "Ownership", "Phone", "Fax", "Website", "Sic", "TickerSymbol",
                                "BillingStreet", "BillingCity", "BillingState", "BillingPostalCode", "BillingCountry",
                                "ShippingStreet", "ShippingCity", "ShippingState", "ShippingPostalCode", "ShippingCountry", "OwnerId"]

    @Test func createAnswers201WithLocationAndId() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Wayne Enterprises"])
            #expect(reply.status == 201)
            #expect(reply.header("Content-Type") == "application/json;charset=UTF-8")
            let id = try #require(reply.json["id"]?.stringValue)
            #expect(reply.json == ["id": .string(id), "success": true, "errors": []])
            #expect(keys(reply.json) == ["id", "success", "errors"])
            #expect(reply.header("Location") == "/services/data/v62.0/sobjects/Account/\(id)")
            #expect(id.count == 18)
            #expect(id.hasPrefix("001"))
            #expect(hasValidChecksum(id), "\(id)")

            let contact = try await emu.create("Contact", ["LastName": "Fox"])
            #expect(contact.hasPrefix("003") && hasValidChecksum(contact))
            let order = try await emu.create("Order__c", ["Name": "O-9"])
            #expect(order.hasPrefix("a01") && hasValidChecksum(order))
            let line = try await emu.create("Order_Line__c", ["Product__c": "Widget", "Order__c": .string(order)])
            #expect(line.hasPrefix("a02") && hasValidChecksum(line))
            #expect(Set([id, contact, order, line]).count == 4)
        }
    }

    @Test func getReturnsEveryFieldWithNulls() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Stark Industries", "Industry": "Energy"])
            let reply = try await emu.rest("GET", "/sobjects/Account/\(id)")
            #expect(reply.status == 200)
            let record = reply.json
            #expect(record["attributes"] == ["type": "Account", "url": .string("/services/data/v62.0/sobjects/Account/\(id)")])
            #expect(keys(record) == ["attributes"] + Self.accountFields)
            #expect(record["Id"]?.stringValue == id)
            #expect(record["Name"] == "Stark Industries")
            #expect(record["Industry"] == "Energy")
            #expect(record["IsDeleted"] == false)
            for field in ["Description", "NumberOfEmployees", "AnnualRevenue", "External_Id__c", "ParentId"] {
                #expect(record[field] == .null, "\(field) is present and null")
            }
            let userId = try #require(record["CreatedById"]?.stringValue)
            #expect(userId.hasPrefix("005") && hasValidChecksum(userId))
            #expect(record["LastModifiedById"]?.stringValue == userId)
            for field in ["CreatedDate", "LastModifiedDate", "SystemModstamp"] {
                #expect(isSalesforceTimestamp(record[field]?.stringValue), "\(field): \(record[field]?.jsonString ?? "nil")")
            }
            #expect(record["CreatedDate"] == record["LastModifiedDate"])
            #expect(record["CreatedDate"] == record["SystemModstamp"])

            // The attributes url follows the version of the request.
            let older = try await emu.send("GET", "/services/data/v58.0/sobjects/Account/\(id)")
            #expect(older.json["attributes"]?["url"]?.stringValue == "/services/data/v58.0/sobjects/Account/\(id)")
        }
    }

    @Test func getWithFieldsParameter() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Tyrell", "Industry": "Technology", "NumberOfEmployees": 12])
            let reply = try await emu.rest("GET", "/sobjects/Account/\(id)?fields=Name,NumberOfEmployees")
            #expect(reply.status == 200)
            #expect(keys(reply.json) == ["attributes", "Id", "Name", "NumberOfEmployees"])
            #expect(reply.json["Name"] == "Tyrell")
            #expect(reply.json["NumberOfEmployees"] == 12)

            let bad = try await emu.rest("GET", "/sobjects/Account/\(id)?fields=Name,Bogus__c")
            expectError(bad, 400, "INVALID_FIELD")
        }
    }

    @Test func patchMovesLastModifiedButNotCreated() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Before"])
            let before = try await emu.record("Account", id)
            let created = try #require(before["CreatedDate"]?.stringValue)

            let later = try await emu.advanceClock(3600)
            #expect(later > created)
            let reply = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["Name": "After", "Industry": "Banking"])
            #expect(reply.status == 204)
            #expect(reply.data.isEmpty)

            let after = try await emu.record("Account", id)
            #expect(after["Name"] == "After")
            #expect(after["Industry"] == "Banking")
            #expect(after["CreatedDate"]?.stringValue == created)
            let modified = try #require(after["LastModifiedDate"]?.stringValue)
            let modstamp = try #require(after["SystemModstamp"]?.stringValue)
            #expect(isSalesforceTimestamp(modified))
            #expect(isSalesforceTimestamp(modstamp))
            #expect(modified >= later, "\(modified) is at or after the advanced clock \(later)")
            #expect(modstamp >= later)
            #expect(modified > created)
        }
    }

    @Test func patchWithTheRecordsOwnIdIsAllowedButAnotherIdIsNot() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Self"])
            #expect(try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["Id": .string(id), "Name": "Same"]).status == 204)
            let other = try await emu.create("Account", ["Name": "Other"])
            let reply = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["Id": .string(other), "Name": "Moved"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("INVALID_FIELD", "The Id field should not be specified in the sobject data.", fields: ["Id"]))
            #expect(try await emu.record("Account", id)["Name"] == "Same")
        }
    }

    @Test func deletedRecordIsEntityIsDeleted() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Doomed"])
            let deleted = try await emu.rest("DELETE", "/sobjects/Account/\(id)")
            #expect(deleted.status == 204)
            #expect(deleted.data.isEmpty)

            let gone = restError("ENTITY_IS_DELETED", "entity is deleted", fields: [])
            let get = try await emu.rest("GET", "/sobjects/Account/\(id)")
            #expect(get.status == 404)
            #expect(get.json == gone)
            let patch = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["Name": "Zombie"])
            #expect(patch.status == 404)
            #expect(patch.json == gone)
            let again = try await emu.rest("DELETE", "/sobjects/Account/\(id)")
            #expect(again.status == 404)
            #expect(again.json == gone)
        }
    }

    @Test func malformedIdIsRejected() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("GET", "/sobjects/Account/001notAnId")
            #expect(reply.status == 400)
            #expect(reply.json == restError("MALFORMED_ID", "Account ID: id value of incorrect type: 001notAnId", fields: ["Id"]))

            // 18 characters whose checksum marks digits as upper case: no id has it.
            let id = try await emu.create("Account", ["Name": "Checksum"])
            let corrupted = String(id.prefix(15)) + "555"
            expectError(try await emu.rest("GET", "/sobjects/Account/\(corrupted)"), 400, "MALFORMED_ID")
            expectError(try await emu.rest("PATCH", "/sobjects/Account/nope", json: ["Name": "x"]), 400, "MALFORMED_ID")
            expectError(try await emu.rest("DELETE", "/sobjects/Account/nope"), 400, "MALFORMED_ID")
        }
    }

    @Test func unknownRecordAndUnknownObjectAreNotFound() async throws {
        try await withEmulator { emu in
            let notFound = restError("NOT_FOUND", "The requested resource does not exist")
            let missing = try await emu.rest("GET", "/sobjects/Account/\(unusedId(prefix: "001"))")
            #expect(missing.status == 404)
            #expect(missing.json == notFound)

            for (method, path) in [("GET", "/sobjects/Nope__c/describe"), ("POST", "/sobjects/Nope__c"),
                                   ("GET", "/sobjects/Nope__c/\(unusedId(prefix: "001"))")] {
                let reply = try await emu.rest(method, path, json: method == "POST" ? ["Name": "x"] : nil)
                #expect(reply.status == 404, "\(method) \(path)")
                #expect(reply.json == notFound, "\(method) \(path)")
            }
            // An unknown API version is not served.
            #expect(try await emu.send("GET", "/services/data/v99.0/sobjects").status == 404)
        }
    }

    @Test func idsResolveCaseInsensitivelyAndFrom15Characters() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Case Test"])
            for variant in [id.lowercased(), id.uppercased()] where variant != id {
                let reply = try await emu.rest("GET", "/sobjects/Account/\(variant)")
                #expect(reply.status == 200, "\(variant)")
                #expect(reply.json["Id"]?.stringValue == id)
            }
            let short = String(id.prefix(15))
            let reply = try await emu.rest("GET", "/sobjects/Account/\(short)")
            #expect(reply.status == 200)
            #expect(reply.json["Id"]?.stringValue == id)
            #expect(try await emu.rest("PATCH", "/sobjects/Account/\(short)", json: ["Description": "via 15"]).status == 204)
            #expect(try await emu.record("Account", id)["Description"] == "via 15")
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(id.lowercased())").status == 204)
            #expect(try await emu.rest("GET", "/sobjects/Account/\(id)").status == 404)
        }
    }

    @Test func describeListsFieldsAndChildRelationships() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("GET", "/sobjects/Account/describe")
            #expect(reply.status == 200)
            #expect(reply.json["keyPrefix"] == "001")
            let fields = reply.json["fields"]?.arrayValue ?? []
            #expect(fields.compactMap { $0["name"]?.stringValue } == Self.accountFields)
            let external = try #require(fields.first { $0["name"] == "External_Id__c" })
            #expect(external["externalId"] == true)
            #expect(external["unique"] == true)
            #expect(external["idLookup"] == true)
            let relationships = reply.json["childRelationships"]?.arrayValue ?? []
            let contacts = try #require(relationships.first { $0["relationshipName"] == "Contacts" })
            #expect(contacts["childSObject"] == "Contact")
            #expect(contacts["field"] == "AccountId")
            #expect(contacts["cascadeDelete"] == true)
            let cases = try #require(relationships.first { $0["relationshipName"] == "Cases" })
            #expect(cases["restrictedDelete"] == true)

            let global = try await emu.rest("GET", "/sobjects")
            let names = (global.json["sobjects"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            #expect(Set(["Account", "Contact", "Opportunity", "Case", "Order__c", "Order_Line__c"]).isSubset(of: Set(names)))
        }
    }
}

/// Polymorphic lookups (`Task.WhatId` → Account or Opportunity), as an org has them.
@Suite struct PolymorphicLookupTests {
    @Test func aWhatIdTakesEitherTargetAndNothingElse() async throws {
        try await withEmulator { emu in
            let describe = try await emu.rest("GET", "/sobjects/Task/describe").json
            let whatId = describe["fields"]?.arrayValue?.first { $0["name"] == "WhatId" }
            #expect(whatId?["referenceTo"] == ["Account", "Opportunity"])
            #expect(whatId?["polymorphicForeignKey"] == true)
            #expect(whatId?["relationshipName"] == "What")

            let account = try await emu.create("Account", ["Name": "Poly account"])
            let deal = try await emu.create("Opportunity", ["Name": "Poly deal", "StageName": "Prospecting", "CloseDate": "2027-01-31",
                                                            "AccountId": .string(account)])
            let contact = try await emu.create("Contact", ["LastName": "Poly"])
            _ = try await emu.create("Task", ["Subject": "On the account", "WhatId": .string(account), "WhoId": .string(contact)])
            _ = try await emu.create("Task", ["Subject": "On the deal", "WhatId": .string(deal)])
            let refused = try await emu.rest("POST", "/sobjects/Task", json: ["Subject": "On a contact", "WhatId": .string(contact)])
            #expect(refused.status == 400)
            #expect(refused.json[0]?["errorCode"] == "INVALID_CROSS_REFERENCE_KEY")

            let tasks = try await QueryTests().query(emu, "SELECT Subject, WhatId FROM Task ORDER BY Subject").json
            #expect(tasks["records"]?.arrayValue?.map { $0["WhatId"] } == [.string(account), .string(deal)])
            let children = try await QueryTests().query(emu, "SELECT Name, (SELECT Subject FROM Tasks) FROM Opportunity WHERE Name = 'Poly deal'").json
            #expect(children["records"]?[0]?["Tasks"]?["records"]?[0]?["Subject"] == "On the deal")
        }
    }
}
