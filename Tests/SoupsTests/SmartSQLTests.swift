import Foundation
import JSON
import Testing

@testable import Soups

@Suite struct SmartSQLTests {
    static func populated(_ body: (SoupStore) async throws -> Void) async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("Accounts", ("Id", .string), ("Name", .string), ("Employees", .integer), ("Industry", .json1)))
            try await store.registerSoup(soup("Contacts", ("Id", .string), ("AccountId", .string), ("LastName", .string)))
            try await store.upsert([
                entry(["Id": "001A", "Name": "Acme", "Employees": 50, "Industry": "Energy", "City": "Paris"]),
                entry(["Id": "001B", "Name": "Globex", "Employees": 500, "Industry": "Tech", "City": "Oslo"]),
                entry(["Id": "001C", "Name": "Initech", "Employees": 5, "Industry": "Tech", "City": "Rome"]),
                entry(["Id": "001D", "Name": "{Accounts:Name}", "Employees": 1, "Industry": "Odd", "City": "Nowhere"]),
            ], into: "Accounts")
            try await store.upsert([
                entry(["Id": "003A", "AccountId": "001A", "LastName": "Smith"]),
                entry(["Id": "003B", "AccountId": "001A", "LastName": "Jones"]),
                entry(["Id": "003C", "AccountId": "001B", "LastName": "Brown"]),
            ], into: "Contacts")
            try await body(store)
        }
    }

    @Test func indexedPathsWithArgumentsAndOrder() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery(
                "SELECT {Accounts:Name}, {Accounts:Employees} FROM {Accounts} WHERE {Accounts:Employees} > ? ORDER BY {Accounts:Employees} DESC",
                arguments: [4])
            #expect(rows == [["Globex", 500], ["Acme", 50], ["Initech", 5]])
        }
    }

    @Test func soupColumnComesBackAsTheEntry() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery("SELECT {Accounts:_soup} FROM {Accounts} WHERE {Accounts:Id} = '001B'")
            #expect(rows.count == 1)
            let object = try #require(rows.first?.first?.objectValue)
            #expect(object["Name"] == "Globex")
            #expect(object["City"] == "Oslo")
            #expect(object["_soupEntryId"] == 2)
        }
    }

    @Test func systemColumns() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery(
                "SELECT {Accounts:_soupEntryId}, {Accounts:_soupLastModifiedDate} FROM {Accounts} WHERE {Accounts:_soupEntryId} >= ? ORDER BY {Accounts:_soupEntryId}",
                arguments: [3])
            #expect(rows.map { $0[0] } == [3, 4])
            let stored = try await store.retrieve(ids: [3], from: "Accounts")
            #expect(rows[0][1] == stored[0][SyncField.soupLastModifiedDate])
        }
    }

    @Test func json1AndUnindexedPaths() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery(
                "SELECT {Accounts:Industry}, COUNT(*) FROM {Accounts} GROUP BY {Accounts:Industry} ORDER BY {Accounts:Industry}")
            #expect(rows == [["Energy", 1], ["Odd", 1], ["Tech", 2]])
            let cities = try await store.smartQuery("SELECT {Accounts:City} FROM {Accounts} WHERE {Accounts:Industry} = 'Tech' ORDER BY {Accounts:City}")
            #expect(cities == [["Oslo"], ["Rome"]])
        }
    }

    @Test func bracesInsideQuotedStringsAreLeftAlone() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery(
                "SELECT '{not:a placeholder}', {Accounts:Id} FROM {Accounts} WHERE {Accounts:Name} = '{Accounts:Name}'")
            #expect(rows == [["{not:a placeholder}", "001D"]])
            let escaped = try await store.smartQuery("SELECT 'it''s {x}' AS \"{col}\", {Accounts:Id} FROM {Accounts} WHERE {Accounts:Id} = '001A'")
            #expect(escaped == [["it's {x}", "001A"]])
        }
    }

    @Test func joinAcrossSoups() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery("""
                SELECT {Accounts:Name}, {Contacts:LastName} FROM {Accounts}, {Contacts}
                WHERE {Contacts:AccountId} = {Accounts:Id} ORDER BY {Contacts:LastName}
                """)
            #expect(rows == [["Globex", "Brown"], ["Acme", "Jones"], ["Acme", "Smith"]])
        }
    }

    @Test func bothSoupColumnsOfAJoinComeBackAsEntries() async throws {
        try await Self.populated { (store) async throws in
            let rows = try await store.smartQuery("""
                SELECT {Accounts:_soup}, {Contacts:_soup} FROM {Accounts}, {Contacts}
                WHERE {Contacts:AccountId} = {Accounts:Id} AND {Contacts:LastName} = 'Brown'
                """)
            #expect(rows.count == 1)
            #expect(rows.first?.count == 2)
            #expect(rows.first?.first?.objectValue?["Name"] == "Globex")
            #expect(rows.first?.last?.objectValue?["LastName"] == "Brown")
        }
    }

    @Test func paging() async throws {
        try await Self.populated { (store) async throws in
            let sql = "SELECT {Accounts:Id} FROM {Accounts} ORDER BY {Accounts:Id}"
            #expect(try await store.smartQuery(sql, pageSize: 3, page: 0) == [["001A"], ["001B"], ["001C"]])
            #expect(try await store.smartQuery(sql, pageSize: 3, page: 1) == [["001D"]])
            #expect(try await store.smartQuery(sql, pageSize: 3, page: 2) == [])
        }
    }

    @Test func caseAndLeadingWhitespaceOfSelect() async throws {
        try await Self.populated { (store) async throws in
            #expect(try await store.smartQuery("\n  select count(*) from {Contacts}") == [[3]])
        }
    }

    @Test(arguments: [
        "DELETE FROM {Accounts}",
        "UPDATE {Accounts} SET {Accounts:Name} = 'x'",
        "DROP TABLE {Accounts}",
        "INSERT INTO {Accounts} (soup) VALUES ('{}')",
        "  pragma table_info({Accounts})",
    ])
    func nonSelectStatementsAreRejected(_ sql: String) async throws {
        try await Self.populated { (store) async throws in
            await #expect(throws: SoupStoreError.invalidSmartSQL("only SELECT statements are allowed")) {
                try await store.smartQuery(sql)
            }
            #expect(try await store.count(QuerySpec(soupName: "Accounts")) == 4)
            #expect(try await store.hasSoup(named: "Accounts"))
        }
    }

    @Test func aSecondStatementCannotBeSmuggledIn() async throws {
        try await Self.populated { (store) async throws in
            await #expect(throws: (any Error).self) {
                try await store.smartQuery("SELECT 1; DELETE FROM {Accounts}")
            }
            #expect(try await store.count(QuerySpec(soupName: "Accounts")) == 4)
        }
    }

    @Test func malformedStatements() async throws {
        try await Self.populated { (store) async throws in
            await #expect(throws: SoupStoreError.unknownSoup("Nope")) { try await store.smartQuery("SELECT * FROM {Nope}") }
            await #expect(throws: SoupStoreError.invalidSmartSQL("unclosed '{' in SELECT {Accounts:Id FROM x")) {
                try await store.smartQuery("SELECT {Accounts:Id FROM x")
            }
            await #expect(throws: SoupStoreError.invalidSmartSQL("unterminated string in SELECT 'abc FROM {Accounts}")) {
                try await store.smartQuery("SELECT 'abc FROM {Accounts}")
            }
            await #expect(throws: SoupStoreError.invalidSmartSQL("empty path in {Accounts:}")) {
                try await store.smartQuery("SELECT {Accounts:} FROM {Accounts}")
            }
            let error = await #expect(throws: SoupStoreError.self) { try await store.smartQuery("SELECT nonsense FROM {Accounts}") }
            guard case .invalidSmartSQL(let message) = error else {
                Issue.record("expected invalidSmartSQL, got \(String(describing: error))")
                return
            }
            #expect(message.contains("nonsense"))
        }
    }

    @Test func translationOfPlaceholders() throws {
        let table = SoupTable(spec: soup("A", ("Name", .string), ("Code", .json1), ("N", .integer)), soupId: 7)
        let sql = try SmartSQL.translate(
            "SELECT {A:_soup}, {A:_soupEntryId}, {A:_soupLastModifiedDate}, {A:Name}, {A:Code}, {A:N}, {A:Other.Path} FROM {A} WHERE {A:Name} = '{A:Name}'",
            tables: ["A": table])
        #expect(sql == """
            SELECT TABLE_7.soup, TABLE_7.id, TABLE_7.lastModified, TABLE_7.TABLE_7_0, json_extract(TABLE_7.soup, '$.Code'), \
            TABLE_7.TABLE_7_2, json_extract(TABLE_7.soup, '$.Other.Path') FROM TABLE_7 WHERE TABLE_7.TABLE_7_0 = '{A:Name}'
            """)
        #expect(try SmartSQL.soupNames(in: "SELECT {A:x}, {B:y}, '{C:z}' FROM {A}, {B}") == ["A", "B"])
    }
}
