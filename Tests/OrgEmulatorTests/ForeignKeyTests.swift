import Foundation
import JSON
import Testing

/// Parents named by a key in a write's body, resolved as an org resolves them: by an external id
/// or `idLookup` field, in sObject, Collections and Composite bodies; the org's errors otherwise.
@Suite struct ForeignKeyTests {
    @Test func aParentByExternalIdOrIdLookupField() async throws {
        try await withEmulator { emu in
            let acme = try await emu.id("Account", "External_Id__c", "ACME-1")
            let contact = try await emu.create("Contact", ["LastName": "Keyed", "Account": ["External_Id__c": "acme-1"]])
            #expect(try await emu.record("Contact", contact)["AccountId"] == .string(acme), "compared without case")
            // Contact.Email is an idLookup field: a case names its contact by e-mail.
            _ = try await emu.create("Contact", ["LastName": "Mail", "Email": "unique@corp.test"])
            let mailId = try await emu.id("Contact", "Email", "unique@corp.test")
            let theCase = try await emu.create("Case", ["Subject": "By mail", "Contact": ["Email": "unique@corp.test"]])
            #expect(try await emu.record("Case", theCase)["ContactId"] == .string(mailId))
            // An update may re-point the parent the same way.
            let update = try await emu.rest("PATCH", "/sobjects/Contact/\(contact)", json: ["Account": ["External_Id__c": "GLOBEX-1"]])
            #expect(update.status == 204, "\(update.text)")
            #expect(try await emu.record("Contact", contact)["AccountId"] == .string(try await emu.id("Account", "External_Id__c", "GLOBEX-1")))
        }
    }

    @Test func theOrgsErrors() async throws {
        try await withEmulator { emu in
            _ = try await emu.create("Contact", ["LastName": "One", "Email": "shared@corp.test"])
            _ = try await emu.create("Contact", ["LastName": "Two", "Email": "shared@corp.test"])
            let cases: [(JSONValue, String)] = [
                (["Account": ["External_Id__c": "NOPE-1"]], "Foreign key external ID: NOPE-1 not found for field External_Id__c in entity Account"),
                (["Contact": ["Email": "shared@corp.test"]], "Foreign key external ID: shared@corp.test matched more than one record for field Email in entity Contact"),
                (["Account": ["Name": "Globex"]], "Provided external ID field does not exist or is not accessible: Name"),
                (["Account": ["External_Id__c": "ACME-1", "Name": "Acme Corporation"]], "More than 1 field provided in an external foreign key reference in entity: Account"),
            ]
            for (reference, message) in cases {
                var body: JSONObject = ["Subject": "Refused"]
                for (key, value) in reference.objectValue ?? [:] { body[key] = value }
                let reply = try await emu.rest("POST", "/sobjects/Case", json: .object(body))
                #expect(reply.status == 400 && reply.json[0]?["errorCode"] == "INVALID_FIELD", "\(reply.text)")
                #expect(reply.json[0]?["message"]?.stringValue == message, "\(reply.text)")
            }
            // In a collection, the refused record fails alone.
            let collection = try await emu.rest("POST", "/composite/sobjects", json: ["allOrNone": false, "records": [
                ["attributes": ["type": "Contact"], "LastName": "Good", "Account": ["External_Id__c": "ACME-1"]],
                ["attributes": ["type": "Contact"], "LastName": "Bad", "Account": ["External_Id__c": "NOPE-1"]]]])
            #expect(collection.json[0]?["success"] == true && collection.json[1]?["success"] == false, "\(collection.text)")
        }
    }
}
