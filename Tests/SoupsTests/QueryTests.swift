import Foundation
import JSON
import Testing

@testable import Soups

@Suite struct QueryTests {
    static let spec = soup(
        "Opps", ("Name", .string), ("Amount", .integer), ("Probability", .floating), ("Description", .fullText),
        ("Region", .json1), ("Stage", .string))

    static let descriptions = [
        "quick brown fox", "lazy dog sleeps", "quick lazy cat", "brown bear", "fox and hound",
    ]

    /// 25 entries: Name "Opp 01"…"Opp 25", Amount 100·i, Probability i/25, a description, Region
    /// (json1) by i % 3, Stage by i % 4, and an unindexed Owner by i % 2.
    static func populated(_ body: (SoupStore) async throws -> Void) async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(spec)
            var input: [JSONObject] = []
            for i in 1...25 {
                input.append(entry([
                    "Name": .string(name(i)),
                    "Amount": .integer(Int64(i * 100)),
                    "Probability": .double(Double(i) / 25),
                    "Description": .string(descriptions[(i - 1) % descriptions.count]),
                    "Region": .string(["EMEA", "AMER", "APAC"][i % 3]),
                    "Stage": .string(["Prospect", "Qualify", "Propose", "Closed"][i % 4]),
                    "Owner": .string(i % 2 == 0 ? "ann" : "bob"),
                ]))
            }
            try await store.upsert(input, into: "Opps")
            try await body(store)
        }
    }

    static func name(_ i: Int) -> String { i < 10 ? "Opp 0\(i)" : "Opp \(i)" }

    static func names(_ store: SoupStore, _ kind: QuerySpec.Kind, orderPath: String = SyncField.soupEntryId,
                      order: QuerySpec.Order = .ascending, pageSize: Int = 1000, page: Int = 0) async throws -> [String] {
        try await store.query(QuerySpec(soupName: "Opps", kind: kind, orderPath: orderPath, order: order, pageSize: pageSize), page: page)
            .map { $0["Name"]?.stringValue ?? "?" }
    }

    @Test func allReturnsEveryEntryInEntryIdOrder() async throws {
        try await Self.populated { (store) async throws in
            let all = try await store.query(QuerySpec(soupName: "Opps"))
            #expect(ids(all) == Array(1...25))
            #expect(try await store.count(QuerySpec(soupName: "Opps")) == 25)
        }
    }

    @Test func exactOnEveryIndexType() async throws {
        try await Self.populated { (store) async throws in
            #expect(try await Self.names(store, .exact(path: "Name", matchKey: "Opp 07")) == ["Opp 07"])
            #expect(try await Self.names(store, .exact(path: "Amount", matchKey: 1200)) == ["Opp 12"])
            #expect(try await Self.names(store, .exact(path: "Probability", matchKey: 0.2)) == ["Opp 05"])
            #expect(try await Self.names(store, .exact(path: "Description", matchKey: "brown bear")) == ["Opp 04", "Opp 09", "Opp 14", "Opp 19", "Opp 24"])
            #expect(try await Self.names(store, .exact(path: "Region", matchKey: "EMEA")) == ["Opp 03", "Opp 06", "Opp 09", "Opp 12", "Opp 15", "Opp 18", "Opp 21", "Opp 24"])
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .exact(path: "Owner", matchKey: "ann"))) == 12)
            #expect(try await Self.names(store, .exact(path: SyncField.soupEntryId, matchKey: 13)) == ["Opp 13"])
            #expect(try await Self.names(store, .exact(path: "Name", matchKey: "nobody")) == [])
        }
    }

    @Test func rangeIsInclusiveAndAcceptsOpenBounds() async throws {
        try await Self.populated { (store) async throws in
            #expect(try await Self.names(store, .range(path: "Amount", beginKey: 300, endKey: 600)) == ["Opp 03", "Opp 04", "Opp 05", "Opp 06"])
            #expect(try await Self.names(store, .range(path: "Amount", beginKey: 2300, endKey: nil)) == ["Opp 23", "Opp 24", "Opp 25"])
            #expect(try await Self.names(store, .range(path: "Amount", beginKey: nil, endKey: 200)) == ["Opp 01", "Opp 02"])
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .range(path: "Amount", beginKey: nil, endKey: nil))) == 25)
            #expect(try await Self.names(store, .range(path: "Probability", beginKey: 0.5, endKey: 0.6)) == ["Opp 13", "Opp 14", "Opp 15"])
            #expect(try await Self.names(store, .range(path: "Name", beginKey: "Opp 2", endKey: "Opp 22")) == ["Opp 20", "Opp 21", "Opp 22"])
            #expect(try await Self.names(store, .range(path: SyncField.soupEntryId, beginKey: 24, endKey: 99)) == ["Opp 24", "Opp 25"])
            #expect(try await Self.names(store, .range(path: "Amount", beginKey: 600, endKey: 300)) == [])
        }
    }

    @Test func likeMatchesPatterns() async throws {
        try await Self.populated { (store) async throws in
            #expect(try await Self.names(store, .like(path: "Name", likeKey: "Opp 1%")) == (10...19).map { "Opp \($0)" })
            #expect(try await Self.names(store, .like(path: "Name", likeKey: "%5")) == ["Opp 05", "Opp 15", "Opp 25"])
            #expect(try await Self.names(store, .like(path: "Stage", likeKey: "pro%"), pageSize: 3) == ["Opp 02", "Opp 04", "Opp 06"])
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .like(path: "Region", likeKey: "A%"))) == 17)
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .like(path: "Owner", likeKey: "b_b"))) == 13)
        }
    }

    @Test func matchUsesTheFullTextIndex() async throws {
        try await Self.populated { (store) async throws in
            #expect(try await Self.names(store, .match(path: "Description", matchKey: "fox")) == ["Opp 01", "Opp 05", "Opp 06", "Opp 10", "Opp 11", "Opp 15", "Opp 16", "Opp 20", "Opp 21", "Opp 25"])
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: "Description", matchKey: "quick AND fox"))) == 5)
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: nil, matchKey: "lazy OR bear"))) == 15)
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: nil, matchKey: "qui*"))) == 10)
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: "Description", matchKey: "\"fox brown\""))) == 0)
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: "Description", matchKey: "\"brown bear\""))) == 5)
            #expect(try await Self.names(store, .match(path: "Description", matchKey: "hound"), order: .descending, pageSize: 2) == ["Opp 25", "Opp 20"])
        }
    }

    @Test func matchFollowsUpdatesAndDeletes() async throws {
        try await Self.populated { (store) async throws in
            var first = try #require(try await store.retrieve(ids: [1], from: "Opps").first)
            first["Description"] = "slow green turtle"
            try await store.upsert([first], into: "Opps")
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: "Description", matchKey: "fox"))) == 9)
            #expect(try await Self.names(store, .match(path: "Description", matchKey: "turtle")) == ["Opp 01"])
            try await store.delete(ids: [1], from: "Opps")
            #expect(try await store.count(QuerySpec(soupName: "Opps", kind: .match(path: nil, matchKey: "turtle"))) == 0)
        }
    }

    @Test func matchOnAPathAppliesToTheWholeExpression() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Title", .fullText), ("Body", .fullText)))
            try await store.upsert([
                entry(["Title": "alpha", "Body": "beta"]), entry(["Title": "gamma", "Body": "alpha"]),
                entry(["Title": "gamma alpha", "Body": "delta"]),
            ], into: "S")
            func titles(_ path: String?, _ key: String) async throws -> [JSONValue?] {
                values(try await store.query(QuerySpec(soupName: "S", kind: .match(path: path, matchKey: key))), "Title")
            }
            // Both words must be in Title: entry 2 has "alpha" only in Body.
            #expect(try await titles("Title", "gamma AND alpha") == ["gamma alpha"])
            #expect(try await titles("Title", "gamma alpha") == ["gamma alpha"])
            #expect(try await titles("Body", "alpha OR delta") == ["gamma", "gamma alpha"])
            #expect(try await titles("Title", "beta OR delta") == [])
            #expect(try await titles(nil, "gamma AND alpha") == ["gamma", "gamma alpha"])
        }
    }

    @Test func matchWithoutAFullTextIndexFails() async throws {
        try await Self.populated { (store) async throws in
            await #expect(throws: SoupStoreError.notIndexed(soup: "Opps", path: "Name")) {
                try await store.query(QuerySpec(soupName: "Opps", kind: .match(path: "Name", matchKey: "Opp")))
            }
            try await store.registerSoup(soup("Plain", ("Name", .string)))
            await #expect(throws: SoupStoreError.notIndexed(soup: "Plain", path: "full_text")) {
                try await store.query(QuerySpec(soupName: "Plain", kind: .match(path: nil, matchKey: "x")))
            }
        }
    }

    @Test func orderAndPaging() async throws {
        try await Self.populated { (store) async throws in
            // Descending by an integer index, 10 a page.
            var pages: [[String]] = []
            for page in 0..<4 {
                pages.append(try await Self.names(store, .all, orderPath: "Amount", order: .descending, pageSize: 10, page: page))
            }
            #expect(pages.map(\.count) == [10, 10, 5, 0])
            let expected: [String] = (1...25).reversed().map(Self.name)
            #expect(pages.flatMap { $0 } == expected)
            #expect(pages[1].first == "Opp 15")

            // Ascending by a string index, ties broken by _soupEntryId.
            let byStage = try await Self.names(store, .all, orderPath: "Stage", pageSize: 7)
            #expect(byStage == ["Opp 03", "Opp 07", "Opp 11", "Opp 15", "Opp 19", "Opp 23", "Opp 02"])
            let byStageDescending = try await Self.names(store, .all, orderPath: "Stage", order: .descending, pageSize: 3)
            #expect(byStageDescending == ["Opp 25", "Opp 21", "Opp 17"])

            // By a json1 index and by an unindexed path.
            let byRegion = try await Self.names(store, .exact(path: "Owner", matchKey: "bob"), orderPath: "Region", pageSize: 3, page: 1)
            #expect(byRegion == ["Opp 19", "Opp 25", "Opp 05"])
            let byOwner = try await Self.names(store, .range(path: "Amount", beginKey: 100, endKey: 400), orderPath: "Owner", order: .descending)
            #expect(byOwner == ["Opp 03", "Opp 01", "Opp 04", "Opp 02"])

            // A floating index, and the full text one.
            #expect(try await Self.names(store, .all, orderPath: "Probability", order: .descending, pageSize: 2) == ["Opp 25", "Opp 24"])
            #expect(try await Self.names(store, .like(path: "Name", likeKey: "Opp 0%"), orderPath: "Description", pageSize: 3) == ["Opp 04", "Opp 09", "Opp 05"])
        }
    }

    @Test func queriesOnDottedPaths() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("C", ("Account.Name", .string), ("attributes.type", .json1)))
            try await store.upsert([
                entry(["Account": ["Name": "Acme"], "attributes": ["type": "Contact"], "n": 1]),
                entry(["Account": ["Name": "Globex"], "attributes": ["type": "Contact"], "n": 2]),
                entry(["Account": ["Name": "Acme"], "attributes": ["type": "Lead"], "n": 3]),
            ], into: "C")
            let acme = try await store.query(QuerySpec(soupName: "C", kind: .exact(path: "Account.Name", matchKey: "Acme")))
            #expect(values(acme, "n") == [1, 3])
            let contacts = try await store.query(QuerySpec(soupName: "C", kind: .exact(path: "attributes.type", matchKey: "Contact"), orderPath: "Account.Name", order: .descending))
            #expect(values(contacts, "n") == [2, 1])
        }
    }

    @Test func retrieveKeepsTheAskedOrderAndSkipsMissing() async throws {
        try await Self.populated { (store) async throws in
            let found = try await store.retrieve(ids: [20, 3, 999, 7], from: "Opps")
            #expect(ids(found) == [20, 3, 7])
            let many = try await store.retrieve(ids: Array(1...25).reversed() + Array(1000...1700), from: "Opps")
            #expect(ids(many) == Array((1...25).reversed()))
        }
    }

    @Test func entriesPagesByIdAndFiltersBySyncId() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string)))
            var input: [JSONObject] = []
            for i in 1...12 {
                var object = entry(["Id": .string("r\(i)")])
                if i % 3 == 0 { object[SyncField.syncId] = 7 } else if i % 3 == 1 { object[SyncField.syncId] = 8 }
                input.append(object)
            }
            try await store.upsert(input, into: "S")
            #expect(ids(try await store.entries(in: "S", afterId: 0, limit: 5)) == [1, 2, 3, 4, 5])
            #expect(ids(try await store.entries(in: "S", afterId: 9, limit: 5)) == [10, 11, 12])
            #expect(ids(try await store.entries(in: "S", syncId: 7)) == [3, 6, 9, 12])
            #expect(ids(try await store.entries(in: "S", afterId: 4, limit: 2, syncId: 8)) == [7, 10])
        }
    }

    @Test func deleteByIdsAndByQuery() async throws {
        try await Self.populated { (store) async throws in
            #expect(try await store.delete(ids: [1, 2, 3, 999], from: "Opps") == 3)
            #expect(try await store.count(QuerySpec(soupName: "Opps")) == 22)
            // A query deletes every page of what it selects, not only the first.
            let removed = try await store.delete(matching: QuerySpec(soupName: "Opps", kind: .range(path: "Amount", beginKey: 1000, endKey: 2000), pageSize: 2))
            #expect(removed == 11)
            #expect(try await store.count(QuerySpec(soupName: "Opps")) == 11)
            #expect(try await store.delete(matching: QuerySpec(soupName: "Opps", kind: .match(path: nil, matchKey: "fox"))) == 4)
            #expect(ids(try await store.query(QuerySpec(soupName: "Opps"))) == [4, 7, 8, 9, 22, 23, 24])
            #expect(try await store.delete(matching: QuerySpec(soupName: "Opps", kind: .like(path: "Region", likeKey: "%"))) == 7)
            #expect(try await store.count(QuerySpec(soupName: "Opps")) == 0)
            #expect(try await store.delete(ids: [], from: "Opps") == 0)
        }
    }

    @Test func deleteManyIdsAcrossChunks() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Text", .fullText)))
            try await store.upsert((1...1200).map { entry(["Text": .string("word\($0 % 2)")]) }, into: "S")
            #expect(try await store.delete(ids: Array(1...1100), from: "S") == 1100)
            #expect(ids(try await store.query(QuerySpec(soupName: "S", pageSize: 500))) == Array(1101...1200))
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .match(path: nil, matchKey: "word0"))) == 50)
        }
    }

    /// A sync down storing over entries reads whole only those it may find unchanged: clean and
    /// last written by the same sync; the others come as their sync columns, read from the row.
    @Test func entriesToSyncOverAreWholeOnlyWhenTheSyncMayLeaveThemUnchanged() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("Accounts", ("Id", .string)))
            try await store.upsert([
                entry(["Id": "001A", "Name": "mine, clean", "__sync_id__": 7, "__local__": false]),
                entry(["Id": "001B", "Name": "mine, dirty", "__sync_id__": 7, "__local__": true, "__locally_updated__": true]),
                entry(["Id": "001C", "Name": "another sync's", "__sync_id__": 8, "__local__": false]),
                entry(["Id": "001D", "Name": "no sync's"]),
            ], into: "Accounts")
            let found = try await store.entriesToSyncOver(in: "Accounts", where: "Id", in: ["001A", "001B", "001C", "001D", "001E"], syncId: 7)
            #expect(found.count == 4)
            let whole = try #require(found["001A"]?.first)
            #expect(whole["Name"] == "mine, clean" && whole.soupEntryId != nil)
            let all = try await store.entries(in: "Accounts", where: "Id", in: ["001B", "001C", "001D"])
            for id in ["001B", "001C", "001D"] {
                let partial = try #require(found[.string(id)]?.first)
                let stored = try #require(all[.string(id)]?.first)
                #expect(partial["Name"] == nil)
                #expect(partial.soupEntryId == stored.soupEntryId)
                #expect(partial.isDirty == stored.isDirty)
                #expect(partial[SyncField.syncId] == stored[SyncField.syncId])
            }
            #expect(found["001B"]?.first?.isDirty == true)
        }
    }
    /// A caller that already holds some of the matching entries gets those as their sync
    /// columns only; the others whole.
    @Test func entriesAlreadyHeldComeAsTheirSyncColumns() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("Contacts", ("AccountId", .string)))
            try await store.upsert([
                entry(["AccountId": "local_1", "LastName": "held"]),
                entry(["AccountId": "local_1", "LastName": "not held"]),
                entry(["AccountId": "local_2", "LastName": "other parent"]),
            ], into: "Contacts")
            let all = try await store.entries(in: "Contacts", where: "AccountId", in: ["local_1", "local_2"])
            let held = try #require(all["local_1"]?.first { $0["LastName"] == "held" }?.soupEntryId)
            let found = try await store.entries(in: "Contacts", where: "AccountId", in: ["local_1", "local_2"], exceptWhole: [held])
            #expect(found["local_1"]?.count == 2 && found["local_2"]?.count == 1)
            let stub = try #require(found["local_1"]?.first { $0.soupEntryId == held })
            #expect(stub["LastName"] == nil && stub.isDirty == false)
            #expect(found["local_1"]?.contains { $0["LastName"] == "not held" } == true)
            #expect(found["local_2"]?.first?["LastName"] == "other parent")
        }
    }

    /// One field of each match, read in SQL: present (a string, a nested value, null) or absent.
    @Test func entriesKeepingOnlyOneField() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("Accounts", ("Name", .string)))
            try await store.upsert([
                entry(["Name": "Acme", "Id": "001A", "Industry": "Tech"]),
                entry(["Name": "Globex", "Id": .null]),
                entry(["Name": "Initech"]),
                entry(["Name": "Umbrella", "Id": ["nested": [1, "two"]]]),
                entry(["Name": "Acme", "Id": "001B"]),
            ], into: "Accounts")
            let all = try await store.entries(in: "Accounts", where: "Name", in: ["Acme", "Globex", "Initech", "Umbrella", "Absent"])
            let found = try await store.entries(in: "Accounts", where: "Name", in: ["Acme", "Globex", "Initech", "Umbrella", "Absent"], keepingOnly: "Id")
            #expect(Set(found["Acme"]?.compactMap { $0["Id"]?.stringValue } ?? []) == ["001A", "001B"])
            #expect(found["Acme"]?.allSatisfy { $0["Industry"] == nil && $0["Name"] == nil } == true)
            #expect(found["Globex"]?.first?["Id"] == .null)
            #expect(found["Initech"]?.first.map { $0.contains("Id") } == false)
            #expect(found["Umbrella"]?.first?["Id"] == ["nested": [1, "two"]])
            #expect(found["Absent"] == nil)
            for (key, entries) in found {
                #expect(Set(entries.compactMap(\.soupEntryId)) == Set(all[key]?.compactMap(\.soupEntryId) ?? []))
            }
        }
    }
}
