import Connectors
import Foundation
import JSON
import Testing

/// sObject Collections: create, update, upsert, delete, retrieve, with per-record errors.
@Suite struct CollectionsTests {
    @Test func createReportsPerRecordErrors() async throws {
        try await withClient { org, client in
            let results = try await client.createRecords([
                account("Coll One"),
                ["attributes": ["type": "Account"], "Industry": "Energy"],
                account("Coll Three"),
                ["attributes": ["type": "Contact"], "LastName": "Coll Four"],
            ])
            #expect(results.map(\.success) == [true, false, true, true])
            #expect(results[0].id?.hasPrefix("001") == true)
            #expect(results[3].id?.hasPrefix("003") == true)
            #expect(results[1].id == nil)
            let error = try #require(results[1].errors.first)
            #expect(error.errorCode == "REQUIRED_FIELD_MISSING")
            #expect(error.fields == ["Name"])
            #expect(!error.message.isEmpty)
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name LIKE 'Coll %'") == 2)
            #expect(await client.usage().byKind["collections"] == 1)
        }
    }

    @Test func allOrNoneRollsEveryRecordBack() async throws {
        try await withClient { org, client in
            let results = try await client.createRecords([account("Atomic One"), account(String(repeating: "x", count: 300)), account("Atomic Three")],
                                                         allOrNone: true)
            #expect(results.allSatisfy { !$0.success })
            #expect(results[1].errors.first?.errorCode == "STRING_TOO_LONG")
            #expect(results[0].errors.first?.errorCode == "ALL_OR_NONE_OPERATION_ROLLED_BACK")
            #expect(results[2].errors.first?.errorCode == "ALL_OR_NONE_OPERATION_ROLLED_BACK")
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name LIKE 'Atomic%'") == 0)
        }
    }

    @Test func updateUpsertRetrieveDelete() async throws {
        try await withClient { org, client in
            let ids = try await createAccounts(client, count: 3, prefix: "Batch")
            let updates = try await client.updateRecords([
                account("Batch Renamed 1", ["Id": .string(ids[0])]),
                account("Batch Renamed 2", ["Id": .string(ids[1]), "NumberOfEmployees": "many"]),
                ["attributes": ["type": "Account"], "Id": .string(ids[2]), "Name": .null],
            ])
            #expect(updates.map(\.success) == [true, false, false])
            #expect(updates[0].id == ids[0])
            #expect(updates[1].errors.first?.errorCode == "INVALID_TYPE_ON_FIELD_IN_RECORD")
            #expect(updates[1].errors.first?.fields == ["NumberOfEmployees"])
            #expect(updates[2].errors.first?.errorCode == "REQUIRED_FIELD_MISSING")

            let upserts = try await client.upsertRecords("Account", externalIdField: "External_Id__c", [
                account("Acme Renamed", ["External_Id__c": "ACME-1"]),
                account("Brand New", ["External_Id__c": "NEW-1"]),
                ["attributes": ["type": "Account"], "External_Id__c": "NEW-2"],
            ])
            #expect(upserts.map(\.success) == [true, true, false])
            #expect(upserts.map(\.created) == [false, true, nil])
            #expect(upserts[2].errors.first?.errorCode == "REQUIRED_FIELD_MISSING")

            let retrieved = try await client.retrieveRecords("Account", ids: [ids[0], ids[1], try #require(upserts[1].id)],
                                                             fields: ["Name", "External_Id__c"])
            #expect(retrieved.map { $0?["Name"]?.stringValue } == ["Batch Renamed 1", "Batch-0002", "Brand New"])
            #expect(retrieved[2]?["External_Id__c"] == "NEW-1")

            let deletes = try await client.deleteRecords(ids: [ids[0], ids[1], "001000000000000AAA"])
            #expect(deletes.map(\.success) == [true, true, false])
            #expect(deletes[0].id == ids[0])
            #expect(deletes[2].errors.first.map { ["NOT_FOUND", "MALFORMED_ID", "ENTITY_IS_DELETED", "INVALID_CROSS_REFERENCE_KEY"]
                .contains($0.errorCode) } == true)
            let afterDelete = try await client.retrieveRecords("Account", ids: [ids[0], ids[2]], fields: ["Name"])
            #expect(afterDelete[0] == nil)
            #expect(afterDelete[1]?["Name"] == "Batch-0003")
            let again = try await client.deleteRecords(ids: [ids[0]])
            #expect(again.first?.errors.first?.errorCode == "ENTITY_IS_DELETED")
            #expect(await client.usage().byKind["collections"] == 7)
        }
    }

    @Test func injectedRecordFaultsSurfaceAsSaveResultErrors() async throws {
        try await withClient { org, client in
            try await org.setFaults(["recordErrorRate": 1, "recordErrorCode": "UNABLE_TO_LOCK_ROW"])
            let results = try await client.createRecords([account("Locked 1"), account("Locked 2")])
            #expect(results.allSatisfy { !$0.success })
            #expect(results.allSatisfy { $0.errors.first?.errorCode == "UNABLE_TO_LOCK_ROW" })
            // Per-record errors are the caller's to handle: the request itself is not retried.
            #expect(await client.usage().retries == 0)
            try await org.setFaults([:])
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name LIKE 'Locked%'") == 0)
        }
    }

    @Test func requestLevelErrorsAreThrown() async throws {
        try await withClient { org, client in
            let error = await caught {
                try await client.upsertRecords("Nope__c", externalIdField: "Key__c", [["attributes": ["type": "Nope__c"], "Key__c": "1"]])
            }
            let apiError = try #require(error as? OrgAPIError)
            #expect(apiError.status == 404)
            #expect(apiError.errorCode == "NOT_FOUND")
            #expect(await client.usage().retries == 0)
        }
    }
}
