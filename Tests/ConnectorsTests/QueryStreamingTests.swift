@testable import Connectors
import Foundation
import JSON
import SOQL
import Testing

/// `query` / `queryAll` streaming across pages, child subquery pages, `count`, and query errors.
@Suite struct QueryStreamingTests {
    /// A 100,000-value IN list cannot fit in a URL: the client says so, naming the limit, and
    /// sends nothing (it used to fail as a bare "HTTP_400: HTTP 400").
    @Test func aQueryTooLongForAURLIsRefusedWithTheReason() async throws {
        try await withClient { org, client in
            let ids = (0..<100_000).map { "'001\(String(format: "%015d", $0))'" }.joined(separator: ",")
            var caught: (any Error)?
            do {
                for try await _ in client.query("SELECT Id FROM Account WHERE Id IN (\(ids))") {}
            } catch {
                caught = error
            }
            let error = try #require(caught as? OrgAPIError)
            #expect(error.errorCode == "URI_TOO_LONG")
            #expect(error.message.contains("16384") && error.message.contains("SOQL query"), "\(error.message)")
            #expect(await org.received("query") == 0)
        }
    }

    @Test func streamsEveryPageInOrder() async throws {
        try await withClient { org, client in
            let ids = try await createAccounts(client, count: 450, prefix: "Paged")
            let before = await client.usage().byKind["query"] ?? 0
            let records = try await collect(client.query("SELECT Id, Name FROM Account WHERE Name LIKE 'Paged-%' ORDER BY Name",
                                                         batchSize: 200))
            #expect(records.count == 450)
            #expect(records.map { $0["Name"]?.stringValue ?? "" } == (1...450).map { "Paged-\(String(format: "%04d", $0))" })
            #expect(records.compactMap { $0["Id"]?.stringValue } == ids)
            #expect(records.allSatisfy { $0["attributes"]?["type"] == "Account" })
            // 200 + 200 + 50.
            #expect((await client.usage().byKind["query"] ?? 0) - before == 3)
        }
    }

    /// Pages are fetched ahead of the consumer (the next request leaves before a page is parsed),
    /// yet a failure reaches the consumer only after every page fetched before it.
    @Test func aFailingPageComesAfterThePagesBeforeIt() async throws {
        try await withClient { org, client in
            try await createAccounts(client, count: 450, prefix: "Ahead")
            _ = try await client.count("SELECT COUNT() FROM Account")
            let used = try #require(await client.usage().dailyUsage?.used)
            // Pages 1 and 2 are answered; page 3 is refused.
            try await org.setFaults(["dailyRequestLimit": .integer(Int64(used + 2))])
            var pages: [Int] = []
            let error = await caught {
                for try await page in client.queryPages(try SOQL.parseQuery("SELECT Id FROM Account WHERE Name LIKE 'Ahead-%'"), batchSize: 200) {
                    pages.append(page.records.count)
                }
            }
            #expect(pages == [200, 200])
            if case .requestLimitExceeded? = error as? OrgClientError {} else {
                Issue.record("expected requestLimitExceeded, got \(String(describing: error))")
            }
        }
    }

    /// A consumer that stops after the first page leaves at most one page fetched ahead.
    @Test func stoppingEarlyFetchesAtMostOnePageAhead() async throws {
        try await withClient { org, client in
            try await createAccounts(client, count: 1000, prefix: "Stop")
            let before = await org.received("query")
            for try await page in client.queryPages(try SOQL.parseQuery("SELECT Id FROM Account WHERE Name LIKE 'Stop-%'"), batchSize: 200) {
                #expect(page.records.count == 200)
                break
            }
            _ = try await client.count("SELECT COUNT() FROM Account")
            // The first page, at most the one ahead of it, and the count.
            #expect(await org.received("query") - before <= 3)
        }
    }

    @Test func batchSizeIsClampedToTheAPIRange() async throws {
        try await withClient { org, client in
            try await createAccounts(client, count: 250, prefix: "Clamp")
            // 50 is below the minimum of 200: two pages, not five.
            let records = try await collect(client.query("SELECT Id FROM Account WHERE Name LIKE 'Clamp-%'", batchSize: 50))
            #expect(records.count == 250)
            #expect(await client.usage().byKind["query"] == 2)
            // No batch size: the org's default (2000) holds it in one page.
            #expect(try await collect(client.query("SELECT Id FROM Account WHERE Name LIKE 'Clamp-%'")).count == 250)
            #expect(await client.usage().byKind["query"] == 3)
        }
    }

    @Test func queryAllIncludesDeletedRecords() async throws {
        try await withClient { org, client in
            let ids = try await createAccounts(client, count: 230, prefix: "Gone")
            let deleted = Array(ids.prefix(210))
            for start in stride(from: 0, to: deleted.count, by: 200) {
                let results = try await client.deleteRecords(ids: Array(deleted[start..<min(deleted.count, start + 200)]))
                #expect(results.allSatisfy { $0.success })
            }
            let live = try await collect(client.query("SELECT Id FROM Account WHERE Name LIKE 'Gone-%'"))
            #expect(live.count == 20)
            let all = try await collect(client.query("SELECT Id, IsDeleted FROM Account WHERE Name LIKE 'Gone-%'", all: true, batchSize: 200))
            #expect(all.count == 230)
            #expect(Set(all.compactMap { $0["Id"]?.stringValue }) == Set(ids))
            let recycled = all.filter { $0["IsDeleted"] == true }.compactMap { $0["Id"]?.stringValue }
            #expect(Set(recycled) == Set(deleted))
            #expect(try await collect(client.query("SELECT Id FROM Account WHERE IsDeleted = true AND Name LIKE 'Gone-%'", all: true)).count == 210)
        }
    }

    @Test func childSubqueriesArePagedToCompletion() async throws {
        try await withClient { org, client in
            let parents = try await createAccounts(client, count: 3, prefix: "Parent")
            // 450 children for the first parent, 201 for the second, none for the third.
            for (parent, count) in [(parents[0], 450), (parents[1], 201)] {
                var contacts = (1...count).map { index -> JSONObject in
                    ["attributes": ["type": "Contact"], "LastName": .string("Kid-\(String(format: "%04d", index))"), "AccountId": .string(parent)]
                }
                while !contacts.isEmpty {
                    let batch = Array(contacts.prefix(200))
                    contacts.removeFirst(batch.count)
                    #expect(try await client.createRecords(batch, allOrNone: true).allSatisfy { $0.success })
                }
            }
            let records = try await collect(client.query(
                "SELECT Id, Name, (SELECT Id, LastName FROM Contacts ORDER BY LastName) FROM Account WHERE Name LIKE 'Parent-%' ORDER BY Name"))
            try #require(records.count == 3)
            for (record, count) in zip(records, [450, 201]) {
                let contacts = try #require(record["Contacts"]?.objectValue, "\(record)")
                #expect(contacts["done"] == true)
                #expect(contacts["nextRecordsUrl"] == nil)
                #expect(contacts["totalSize"]?.integerValue == Int64(count))
                let names = (contacts["records"]?.arrayValue ?? []).compactMap { $0["LastName"]?.stringValue }
                #expect(names == (1...count).map { "Kid-\(String(format: "%04d", $0))" })
            }
            #expect(records[2]["Contacts"] == .null)
            // One parent query, then 2 more child pages for the first parent and 1 for the second.
            #expect(await client.usage().byKind["query"] == 4)
        }
    }

    @Test func parentPagesAndChildPagesTogether() async throws {
        try await withClient { org, client in
            let parents = try await createAccounts(client, count: 260, prefix: "Family")
            // Every parent gets one child; the 250th (on the second page) gets 230.
            var contacts: [JSONObject] = parents.map { ["attributes": ["type": "Contact"], "LastName": "Only", "AccountId": .string($0)] }
            contacts += (1...229).map { index in
                ["attributes": ["type": "Contact"], "LastName": .string("Big-\(String(format: "%04d", index))"), "AccountId": .string(parents[249])]
            }
            while !contacts.isEmpty {
                let batch = Array(contacts.prefix(200))
                contacts.removeFirst(batch.count)
                #expect(try await client.createRecords(batch, allOrNone: true).allSatisfy { $0.success })
            }
            var seen = 0
            for try await record in client.query(
                "SELECT Id, (SELECT LastName FROM Contacts) FROM Account WHERE Name LIKE 'Family-%' ORDER BY Name", batchSize: 200) {
                let expected = record["Id"]?.stringValue == parents[249] ? 230 : 1
                let children = record["Contacts"]?["records"]?.arrayValue ?? []
                #expect(children.count == expected, "\(record["Id"] ?? .null)")
                #expect(record["Contacts"]?["done"] == true)
                seen += 1
            }
            #expect(seen == 260)
            // 2 parent pages + 1 child page.
            #expect(await client.usage().byKind["query"] == 3)
        }
    }

    /// Pages asked for raw leave their records as the org sent them, except pages whose records
    /// hold child subquery results: those come built, their children completed.
    @Test func rawPagesLeaveRecordsUnbuiltUnlessTheyHoldChildResults() async throws {
        try await withClient { org, client in
            let parents = try await createAccounts(client, count: 260, prefix: "Raw")
            var contacts: [JSONObject] = (1...230).map { index in
                ["attributes": ["type": "Contact"], "LastName": .string("Kid-\(index)"), "AccountId": .string(parents[249])]
            }
            while !contacts.isEmpty {
                let batch = Array(contacts.prefix(200))
                contacts.removeFirst(batch.count)
                #expect(try await client.createRecords(batch, allOrNone: true).allSatisfy { $0.success })
            }
            var ids: [String] = []
            for try await page in client.queryPages(try SOQL.parseQuery("SELECT Id, Name FROM Account WHERE Name LIKE 'Raw-%' ORDER BY Name"),
                                                    batchSize: 200, raw: true) {
                let raw = try #require(page.raw)
                #expect(page.records.isEmpty && page.count == raw.count && page.totalSize == 260)
                ids += try raw.objects().compactMap { $0["Id"]?.stringValue }
            }
            #expect(ids == parents)
            // With a subquery: the first page holds no child results (raw), the second holds the
            // 250th parent's first 200 children (built, the other 30 fetched).
            var kinds: [String] = []
            var children = 0
            for try await page in client.queryPages(try SOQL.parseQuery("SELECT Id, (SELECT LastName FROM Contacts) FROM Account WHERE Name LIKE 'Raw-%' ORDER BY Name"),
                                                    batchSize: 200, raw: true) {
                kinds.append(page.raw == nil ? "built" : "raw")
                for record in try page.raw?.objects() ?? page.records {
                    children += record["Contacts"]?["records"]?.arrayValue?.count ?? 0
                    if record["Contacts"] != .null { #expect(record["Contacts"]?["done"] == true) }
                }
            }
            #expect(kinds == ["raw", "built"])
            #expect(children == 230)
        }
    }

    /// A page asked for raw is read as one only when it is what a built page would accept: else it
    /// is built, and fails as a built page does (never a sync that stops early, taking a page it
    /// cannot read as the last).
    @Test(arguments: [
        #"{"totalSize":5,"done":fals,"nextRecordsUrl":"/q/2","records":[{"Id":"1"}]}"#,
        #"{"totalSize":5,"done":false,"nextRecordsUrl":"/q/\x","records":[{"Id":"1"}]}"#,
        #"{"totalSize":5,"done":true,"records":[{"Id":"1"},tru]}"#,
        #"{"totalSize":5,"done":true,"records":[{"Id":"1"}],"records":[]}"#,
        #"{"totalSize":5,"done":true,"records":[{"Id":"1","Contacts":{"done":true,"\u0072ecords":[]}}]}"#,
        #"{"totalSize":5,"done":true,"records":[{"Id":"1","Contacts":{"done":true,"records":[]}}]}"#,
        "{\"total\u{01}Size\":5,\"done\":true,\"records\":[{\"Id\":\"1\"}]}",
    ]) func rawPagesAreOnlyPagesABuiltPageWouldAccept(_ text: String) {
        #expect(QueryPages.rawPage(Array(text.utf8)) == nil)
    }

    @Test func aPageWithAMemberNameThatIsNotUTF8IsBuilt() {
        let page = Array(#"{"done":true,""#.utf8) + [0xFF] + Array(#"":1,"records":[{"Id":"1"}]}"#.utf8)
        #expect(QueryPages.rawPage(page) == nil)
    }

    @Test func aRawPageKeepsItsRecordsAndNextPage() throws {
        let text = #"{"totalSize":5,"done":false,"nextRecordsUrl":"/q/2","records":[{"Id":"1"},null,{"Id":"2"}]}"#
        let (page, next) = try #require(QueryPages.rawPage(Array(text.utf8)))
        #expect(next == "/q/2" && page.totalSize == 5 && page.records.isEmpty)
        #expect(try page.raw?.objects() == [["Id": "1"], ["Id": "2"]])
    }

    @Test func stopsFetchingWhenTheConsumerStops() async throws {
        try await withClient { org, client in
            try await createAccounts(client, count: 450, prefix: "Early")
            var first: JSONObject?
            for try await record in client.query("SELECT Id, Name FROM Account WHERE Name LIKE 'Early-%' ORDER BY Name", batchSize: 200) {
                first = record
                break
            }
            #expect(first?["Name"] == "Early-0001")
            try await Task.sleep(for: .milliseconds(200))
            #expect(await client.usage().byKind["query"] == 1)
            #expect(await org.received("query") == 1)
        }
    }

    @Test func countAndParentPaths() async throws {
        try await withClient { org, client in
            #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            #expect(try await client.count("SELECT COUNT() FROM Contact WHERE Account.Name = 'Acme Corporation'") == 2)
            let contacts = try await collect(client.query("SELECT LastName, Account.Name FROM Contact WHERE Email = 'hank@globex.example'"))
            #expect(contacts.count == 1)
            #expect(contacts.first?["Account"]?["Name"] == "Globex")
            #expect(try await client.isSandbox())
        }
    }

    @Test func malformedQueriesAreTypedOrgErrors() async throws {
        try await withClient { org, client in
            let streamError = await caught { try await collect(client.query("SELECT Id FRM Account")) }
            let error = try #require(streamError as? OrgAPIError, "\(String(describing: streamError))")
            #expect(error.status == 400)
            #expect(error.errorCode == "MALFORMED_QUERY")
            #expect(!error.message.isEmpty)
            let countError = await caught { try await client.count("SELECT COUNT() FROM Nope__c") }
            #expect((countError as? OrgAPIError)?.errorCode == "INVALID_TYPE")
            let fieldError = await caught { try await collect(client.query("SELECT Bogus__c FROM Account")) }
            #expect((fieldError as? OrgAPIError)?.errorCode == "INVALID_FIELD")
            // Client errors are not retried.
            #expect(await client.usage().retries == 0)
            #expect(await client.usage().byKind["query"] == 3)
        }
    }
}
