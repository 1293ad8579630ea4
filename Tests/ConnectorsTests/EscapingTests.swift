import Connectors
import Foundation
import JSON
import SOQL
import Testing

/// Query values with quotes, backslashes, `%` and URL-special characters, built through the SOQL
/// AST, reach the org intact and select exactly the right records.
@Suite struct EscapingTests {
    /// Names that break naive quoting or URL encoding, each with a near-miss decoy.
    static let tricky = [
        "O'Brien & Sons",
        #"C:\Temp\new"#,
        "50% off",
        #"It's \' both"#,
        #"Ends with backslash\"#,
        "Quote \"double\"",
        "Plus+Hash#Amp&Eq=Semi;",
        "Under_score",
        "Line\nbreak\tand tab",
        "Ünïcødé 日本 🚀",
    ]
    static let decoys = [
        "OBrien & Sons", #"C:Tempnew"#, "50X off", "Its ' both", "Ends with backslash", "Quote double", "Plus Hash", "UnderXscore",
        "Line break", "Unicode",
    ]

    func seed(_ client: SalesforceClient) async throws -> [String: String] {
        let results = try await client.createRecords((Self.tricky + Self.decoys).map { account($0) }, allOrNone: true)
        var ids: [String: String] = [:]
        for (name, result) in zip(Self.tricky + Self.decoys, results) {
            let id = try #require(result.id, "\(name): \(result.errors)")
            ids[name] = id
        }
        return ids
    }

    @Test func equalityMatchesExactlyTheNamedRecord() async throws {
        try await withClient { org, client in
            let ids = try await seed(client)
            for name in Self.tricky {
                var query = try SOQLQuery(selecting: ["Id", "Name"], from: "Account")
                query.addFilter(try .compare("Name", .equal, .string(name)))
                let records = try await collect(client.query(query))
                #expect(records.map { $0["Name"]?.stringValue } == [name], "\(query)")
                #expect(records.first?["Id"]?.stringValue == ids[name])
                // The same value through count(), with the text printed by the AST.
                var counting = query
                counting.select = [.count]
                #expect(try await client.count(counting.description) == 1, "\(counting)")
            }
        }
    }

    @Test func inListMatchesExactlyTheNamedRecords() async throws {
        try await withClient { org, client in
            let ids = try await seed(client)
            var query = try SOQLQuery(selecting: ["Id", "Name"], from: "Account")
            query.addFilter(try .isIn("Name", Self.tricky))
            let records = try await collect(client.query(query))
            #expect(Set(records.compactMap { $0["Name"]?.stringValue }) == Set(Self.tricky))
            #expect(Set(records.compactMap { $0["Id"]?.stringValue }) == Set(Self.tricky.compactMap { ids[$0] }))

            var negated = try SOQLQuery(selecting: ["Name"], from: "Account")
            negated.addFilter(try .isIn("Name", Self.tricky, negated: true))
            let others = try await collect(client.query(negated)).compactMap { $0["Name"]?.stringValue }
            #expect(Set(others) == Set(Self.decoys + ["Acme Corporation", "Globex", "Initech"]))
        }
    }

    @Test func filtersCombineWithExistingConditions() async throws {
        try await withClient { org, client in
            _ = try await seed(client)
            var query = try SOQL.parseQuery("SELECT Name FROM Account WHERE Name = 'Globex' OR Name = 'Initech'")
            query.addFilter(try .compare("Name", .notEqual, .string("Initech")))
            #expect(try await collect(client.query(query)).compactMap { $0["Name"]?.stringValue } == ["Globex"])
        }
    }

    @Test func likeWithEscapedQuote() async throws {
        try await withClient { org, client in
            _ = try await seed(client)
            var query = try SOQLQuery(selecting: ["Name"], from: "Account")
            query.addFilter(try .compare("Name", .like, .string("O'Brien%")))
            #expect(try await collect(client.query(query)).compactMap { $0["Name"]?.stringValue } == ["O'Brien & Sons"])
        }
    }

    @Test func trickyValuesRoundTripThroughBulkQuery() async throws {
        try await withClient { org, client in
            _ = try await seed(client)
            var query = try SOQLQuery(selecting: ["Name"], from: "Account")
            query.addFilter(try .isIn("Name", Self.tricky))
            let rows = try await bulkRows(client.bulkQuery(query.description, maxRecordsPerPage: 3, pollInterval: 0.01))
            #expect(Set(rows.compactMap { $0["Name"] }) == Set(Self.tricky))
        }
    }
}
