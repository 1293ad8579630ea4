import Connectors
import Foundation
import JSON
import Testing

/// Bulk API 2.0 ingest (results mapped back to input rows) and query streaming across result pages.
@Suite struct BulkTests {
    @Test func insertMapsEveryResultBackToItsInputRow() async throws {
        try await withClient { org, client in
            let names: [String?] = ["Bulk Plain", "Bulk, Comma Inc.", nil, "Bulk \"Quoted\" Ltd", "Bulk Twin", "Bulk\nTwo Lines", "Bulk Twin"]
            // Rows 4 and 6 are identical: each must still get its own record.
            let externalIds: [String?] = names.indices.map { [4, 6].contains($0) ? nil : "BULK-\($0)" }
            let rows: [[String?]] = names.enumerated().map { index, name in [name, index == 3 ? "Banking" : nil, externalIds[index]] }
            let result = try await client.bulkIngest(object: "Account", operation: "insert", columns: ["Name", "Industry", "External_Id__c"],
                                                     rows: rows, chunkRows: 3, pollInterval: 0.01)
            #expect(result.state == "JobComplete")
            #expect(result.errorMessage == nil)
            #expect(result.rows.count == names.count)
            #expect(result.rows.allSatisfy { $0.processed })
            // The row without a Name failed, and only it.
            let failed = result.rows.enumerated().filter { $0.element.error != nil }.map(\.offset)
            #expect(failed == [2])
            #expect(result.rows[2].error?.hasPrefix("REQUIRED_FIELD_MISSING:") == true)
            #expect(result.rows[2].id == nil || result.rows[2].id == "")
            // Every other row's id is the record made from that row.
            var seen = Set<String>()
            for (index, row) in result.rows.enumerated() where index != 2 {
                let id = try #require(row.id, "row \(index)")
                #expect(row.created)
                #expect(seen.insert(id).inserted, "row \(index) got an id already given to another row")
                let record = try await client.retrieve("Account", id: id, fields: ["Name", "External_Id__c", "Industry"])
                #expect(record["Name"]?.stringValue == names[index], "row \(index)")
                #expect(record["External_Id__c"]?.stringValue == externalIds[index], "row \(index)")
                #expect(record["Industry"] == (index == 3 ? "Banking" : .null), "row \(index)")
            }
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE Name LIKE 'Bulk%'") == 6)
        }
    }

    @Test func upsertAndDelete() async throws {
        try await withClient { org, client in
            let upsert = try await client.bulkIngest(object: "Account", operation: "upsert", externalIdField: "External_Id__c",
                                                     columns: ["External_Id__c", "Name"],
                                                     rows: [["ACME-1", "Acme via Bulk"], ["UPS-1", "Upserted One"], ["UPS-2", nil]],
                                                     pollInterval: 0.01)
            #expect(upsert.state == "JobComplete")
            #expect(upsert.rows.map(\.processed) == [true, true, true])
            #expect(upsert.rows[0].created == false)
            #expect(upsert.rows[0].error == nil)
            #expect(upsert.rows[1].created == true)
            #expect(upsert.rows[2].error?.hasPrefix("REQUIRED_FIELD_MISSING") == true)
            let acme = try await client.retrieve("Account", id: try #require(upsert.rows[0].id), fields: ["Name", "External_Id__c"])
            #expect(acme["Name"] == "Acme via Bulk")
            #expect(acme["External_Id__c"] == "ACME-1")

            let newId = try #require(upsert.rows[1].id)
            let delete = try await client.bulkIngest(object: "Account", operation: "delete", columns: ["Id"],
                                                     rows: [[newId], ["001000000000000AAA"]], pollInterval: 0.01)
            #expect(delete.state == "JobComplete")
            #expect(delete.rows[0].error == nil)
            #expect(delete.rows[0].id == newId)
            #expect(delete.rows[1].error != nil)
            #expect(try await client.count("SELECT COUNT() FROM Account WHERE External_Id__c = 'UPS-1'") == 0)
            #expect(await bulkRequests(client) >= 12)
        }
    }

    @Test func aJobTheOrgFailsReportsItsMessage() async throws {
        try await withClient { org, client in
            let result = try await client.bulkIngest(object: "Account", operation: "insert", columns: ["Name", "Bogus__c"],
                                                     rows: [["A", "1"]], pollInterval: 0.01)
            #expect(result.state == "Failed")
            #expect(result.errorMessage?.contains("Bogus__c") == true)
            #expect(result.rows.map(\.processed) == [false])
            // An unknown object is refused when the job is created.
            let error = await caught {
                try await client.bulkIngest(object: "Nope__c", operation: "insert", columns: ["Name"], rows: [["A"]], pollInterval: 0.01)
            }
            #expect(error is OrgAPIError)
        }
    }

    @Test func queryStreamsAcrossResultPages() async throws {
        try await withClient { org, client in
            let names = ["BulkQ-1", "BulkQ-2, with comma", "BulkQ-3 \"quoted\"", "BulkQ-4\nnewline", "BulkQ-5", "BulkQ-6", "BulkQ-7"]
            let results = try await client.createRecords(names.map { account($0, ["NumberOfEmployees": 7]) }, allOrNone: true)
            #expect(results.allSatisfy { $0.success })
            let before = await bulkRequests(client)
            let rows = try await bulkRows(client.bulkQuery("SELECT Id, Name, NumberOfEmployees FROM Account WHERE Name LIKE 'BulkQ-%' ORDER BY Name",
                                                          maxRecordsPerPage: 2, pollInterval: 0.01))
            #expect(rows.map { $0["Name"] ?? "" } == names)
            #expect(rows.allSatisfy { $0["NumberOfEmployees"] == "7" })
            #expect(Set(rows.compactMap { $0["Id"] }) == Set(results.compactMap(\.id)))
            // Create, one status poll, four result pages (2 + 2 + 2 + 1), each knowing the job's size.
            #expect(await bulkRequests(client) - before == 6)
            #expect(await client.usage().byKind["bulkStatus"] == 1, "status polls are counted apart")
            let pages = try await collect(client.bulkQuery("SELECT Name FROM Account WHERE Name LIKE 'BulkQ-%' ORDER BY Name",
                                                           maxRecordsPerPage: 3, pollInterval: 0.01))
            #expect(pages.map(\.rows.count) == [3, 3, 1] && pages.allSatisfy { $0.totalSize == 7 && $0.columns == ["Name"] })
        }
    }

    @Test func queryAllAndQueryErrors() async throws {
        try await withClient { org, client in
            let ids = try await createAccounts(client, count: 3, prefix: "BulkGone")
            _ = try await client.deleteRecords(ids: [ids[0]])
            let live = try await bulkRows(client.bulkQuery("SELECT Id FROM Account WHERE Name LIKE 'BulkGone-%'", pollInterval: 0.01))
            #expect(live.count == 2)
            let all = try await bulkRows(client.bulkQuery("SELECT Id FROM Account WHERE Name LIKE 'BulkGone-%'", all: true, pollInterval: 0.01))
            #expect(all.count == 3)
            let error = await caught { try await bulkRows(client.bulkQuery("SELECT Id FRM Account", pollInterval: 0.01)) }
            let apiError = try #require(error as? OrgAPIError)
            #expect(apiError.status == 400)
        }
    }

    /// Bulk API requests of the client, status polls included.
    func bulkRequests(_ client: SalesforceClient) async -> Int {
        let byKind = await client.usage().byKind
        return (byKind["bulk"] ?? 0) + (byKind["bulkStatus"] ?? 0)
    }
}
