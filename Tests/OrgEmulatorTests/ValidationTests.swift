import Foundation
import JSON
import Testing

/// Field validation from the schema: required, length, unknown and read-only fields, unique
/// external ids, restricted picklists, references, type coercion.
@Suite struct ValidationTests {
    @Test func requiredFieldsMissingAreListed() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Opportunity", json: ["Amount": 10])
            #expect(reply.status == 400)
            #expect(reply.json == restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Name, StageName, CloseDate]",
                                            fields: ["Name", "StageName", "CloseDate"]))
            let contact = try await emu.rest("POST", "/sobjects/Contact", json: ["FirstName": "No"])
            #expect(contact.json == restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [LastName]", fields: ["LastName"]))
            // An explicit null is missing too.
            let nulled = try await emu.rest("POST", "/sobjects/Account", json: ["Name": .null])
            #expect(nulled.json == restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Name]", fields: ["Name"]))
            // Clearing a required field on update.
            let id = try await emu.create("Account", ["Name": "Keep"])
            let cleared = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["Name": .null])
            #expect(cleared.status == 400)
            #expect(cleared.json == restError("REQUIRED_FIELD_MISSING", "Required fields are missing: [Name]", fields: ["Name"]))
            #expect(try await emu.count("Opportunity") == 1)
            #expect(try await emu.count("Contact") == 3)
        }
    }

    @Test func stringTooLong() async throws {
        try await withEmulator { emu in
            let long = String(repeating: "x", count: 41)
            let reply = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Ok", "FirstName": .string(long)])
            #expect(reply.status == 400)
            expectError(reply, 400, "STRING_TOO_LONG")
            #expect(reply.json.arrayValue?.first?["fields"] == ["FirstName"])
            #expect(reply.json.arrayValue?.first?["message"]?.stringValue?.contains("max length=40") == true)
            // Exactly the limit is fine.
            _ = try await emu.create("Contact", ["LastName": "Ok", "FirstName": .string(String(long.dropLast()))])
        }
    }

    @Test func unknownFieldIsInvalidField() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "X", "Bogus__c": 1])
            #expect(reply.status == 400)
            #expect(reply.json == restError("INVALID_FIELD", "No such column 'Bogus__c' on sobject of type Account", fields: ["Bogus__c"]))
            let id = try await emu.create("Account", ["Name": "Y"])
            let patch = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["Bogus__c": 1])
            expectError(patch, 400, "INVALID_FIELD")
        }
    }

    @Test func idInCreateBodyIsInvalidField() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Account", json: ["Id": .string(unusedId(prefix: "001")), "Name": "X"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("INVALID_FIELD", "The Id field should not be specified in the sobject data.", fields: ["Id"]))
            #expect(try await emu.count("Account") == 3)
        }
    }

    @Test func readOnlyFieldIsInvalidForInsertUpdate() async throws {
        try await withEmulator { emu in
            let message = "Unable to create/update fields: CreatedDate. Please check the security settings of this field and verify that it is read/write for your profile or permission set."
            let reply = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "X", "CreatedDate": "2020-01-01T00:00:00.000+0000"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("INVALID_FIELD_FOR_INSERT_UPDATE", message, fields: ["CreatedDate"]))
            let id = try await emu.create("Account", ["Name": "Y"])
            let patch = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["CreatedDate": "2020-01-01T00:00:00.000+0000"])
            #expect(patch.status == 400)
            #expect(patch.json == restError("INVALID_FIELD_FOR_INSERT_UPDATE", message, fields: ["CreatedDate"]))
            expectError(try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["SystemModstamp": .null]), 400, "INVALID_FIELD_FOR_INSERT_UPDATE")
        }
    }

    @Test func duplicateExternalIdIsDuplicateValue() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let reply = try await emu.rest("POST", "/sobjects/Account", json: ["Name": "Copy", "External_Id__c": "ACME-1"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("DUPLICATE_VALUE",
                                            "duplicate value found: External_Id__c duplicates value on record with id: \(acme.prefix(15))",
                                            fields: []))
            // On update too.
            let other = try await emu.create("Account", ["Name": "Other", "External_Id__c": "OTHER-1"])
            expectError(try await emu.rest("PATCH", "/sobjects/Account/\(other)", json: ["External_Id__c": "ACME-1"]), 400, "DUPLICATE_VALUE")
            // Re-saving a record's own value is not a duplicate.
            #expect(try await emu.rest("PATCH", "/sobjects/Account/\(other)", json: ["External_Id__c": "OTHER-1"]).status == 204)
            // A deleted record's value is free again.
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(other)").status == 204)
            _ = try await emu.create("Account", ["Name": "Reuse", "External_Id__c": "OTHER-1"])
        }
    }

    @Test func restrictedPicklistRejectsUnknownValues() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Opportunity",
                                           json: ["Name": "Deal", "StageName": "Dreaming", "CloseDate": "2030-01-01"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST", "StageName: bad value for restricted picklist field: Dreaming",
                                            fields: ["StageName"]))
            let id = try await emu.create("Opportunity", ["Name": "Deal", "StageName": "Closed Won", "CloseDate": "2030-01-01"])
            #expect(try await emu.record("Opportunity", id)["CloseDate"] == "2030-01-01")
            // Unrestricted picklists take any value.
            _ = try await emu.create("Account", ["Name": "Odd", "Industry": "Piracy"])
        }
    }

    @Test func referenceToAMissingRecordIsInvalidCrossReferenceKey() async throws {
        try await withEmulator { emu in
            let invalid = restError("INVALID_CROSS_REFERENCE_KEY", "invalid cross reference id", fields: ["AccountId"])
            let missing = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Orphan", "AccountId": .string(unusedId(prefix: "001"))])
            #expect(missing.status == 400)
            #expect(missing.json == invalid)
            // A live record of the wrong object.
            let contact = try await emu.id("Contact", "Email", "wile@acme.example")
            let wrongType = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Orphan", "AccountId": .string(contact)])
            #expect(wrongType.json == invalid)
            // A deleted parent.
            let account = try await emu.create("Account", ["Name": "Short-lived"])
            #expect(try await emu.rest("DELETE", "/sobjects/Account/\(account)").status == 204)
            let deleted = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Orphan", "AccountId": .string(account)])
            #expect(deleted.json == invalid)
            // Not an id at all.
            let malformed = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Orphan", "AccountId": "garbage"])
            expectError(malformed, 400, "MALFORMED_ID")
            #expect(try await emu.count("Contact") == 3)
        }
    }

    @Test func numericStringsAreCoerced() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Account", ["Name": "Coerced", "NumberOfEmployees": "10000", "AnnualRevenue": "2500.5"])
            let record = try await emu.record("Account", id)
            #expect(record["NumberOfEmployees"] == .integer(10000))
            #expect(record["AnnualRevenue"] == .double(2500.5))
            #expect(try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["NumberOfEmployees": "31"]).status == 204)
            #expect(try await emu.record("Account", id)["NumberOfEmployees"] == .integer(31))

            let bad = try await emu.rest("PATCH", "/sobjects/Account/\(id)", json: ["NumberOfEmployees": "lots"])
            expectError(bad, 400, "INVALID_TYPE_ON_FIELD_IN_RECORD")
            #expect(bad.json.arrayValue?.first?["fields"] == ["NumberOfEmployees"])
        }
    }

    @Test func datetimesAreStoredInSalesforceFormat() async throws {
        try await withEmulator { emu in
            let id = try await emu.create("Opportunity", ["Name": "Dated", "StageName": "Prospecting", "CloseDate": "2031-02-03T10:00:00Z"])
            #expect(try await emu.record("Opportunity", id)["CloseDate"] == "2031-02-03")
            let bad = try await emu.rest("POST", "/sobjects/Opportunity", json: ["Name": "Dated", "StageName": "Prospecting", "CloseDate": "soon"])
            expectError(bad, 400, "INVALID_TYPE_ON_FIELD_IN_RECORD")
        }
    }

    @Test func badJSONBodyIsJsonParserError() async throws {
        try await withEmulator { emu in
            let reply = try await emu.send("POST", api + "/sobjects/Account", body: Data("{\"Name\": ".utf8), contentType: "application/json")
            expectError(reply, 400, "JSON_PARSER_ERROR")
            let array = try await emu.rest("POST", "/sobjects/Account", json: ["Name"])
            expectError(array, 400, "JSON_PARSER_ERROR")
        }
    }
}
