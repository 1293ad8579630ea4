import Foundation
import JSON
import Testing

@testable import Soups

@Suite struct SoupRegistrationTests {
    @Test func registerCreatesOnceAndListsSpecs() async throws {
        try await withStore { (store) async throws in
            let accounts = soup("Accounts", ("Id", .string), ("Name", .fullText), ("NumberOfEmployees", .integer))
            let contacts = soup("Contacts", ("Id", .string), ("AccountId", .json1), ("Score", .floating))
            #expect(try await store.hasSoup(named: "Accounts") == false)
            #expect(try await store.registerSoup(accounts) == true)
            #expect(try await store.registerSoup(accounts) == false)
            #expect(try await store.registerSoup(contacts) == true)
            #expect(try await store.hasSoup(named: "Accounts"))
            #expect(try await store.soupSpec(named: "Accounts") == accounts)
            #expect(try await store.soupSpecs() == [accounts, contacts])
        }
    }

    @Test func everyIndexTypeDecodesFromUserstoreSpelling() throws {
        let specs = try JSONDecoder().decode(
            [IndexSpec].self,
            from: Data(#"[{"path":"a","type":"string"},{"path":"b","type":"integer"},{"path":"c","type":"floating"},{"path":"d","type":"full_text"},{"path":"e","type":"json1"}]"#.utf8))
        #expect(specs.map(\.type) == [.string, .integer, .floating, .fullText, .json1])
    }

    @Test func invalidSpecsAreRejected() async throws {
        try await withStore { (store) async throws in
            await #expect(throws: SoupStoreError.invalidSoupSpec("a soup needs a non-empty name")) {
                try await store.registerSoup(soup("", ("Id", .string)))
            }
            await #expect(throws: SoupStoreError.invalidSoupSpec("soup \"S\": path \"Id\" is indexed twice")) {
                try await store.registerSoup(soup("S", ("Id", .string), ("Id", .integer)))
            }
            await #expect(throws: SoupStoreError.invalidSoupSpec("soup \"S\": an index needs a non-empty path")) {
                try await store.registerSoup(soup("S", ("", .string)))
            }
            #expect(try await store.soupSpecs().isEmpty)
        }
    }

    @Test func changingTheTypeOfAnExistingIndexIsRejected() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Id", .string)))
            await #expect(throws: SoupStoreError.invalidSoupSpec("soup \"S\" exists with other index types for Id")) {
                try await store.registerSoup(soup("S", ("Id", .integer)))
            }
            #expect(try await store.soupSpec(named: "S") == soup("S", ("Id", .string)))
        }
    }

    @Test func unknownSoupIsReportedByEveryOperation() async throws {
        try await withStore { (store) async throws in
            let missing = SoupStoreError.unknownSoup("Nope")
            await #expect(throws: missing) { try await store.soupSpec(named: "Nope") }
            await #expect(throws: missing) { try await store.upsert([entry(["a": 1])], into: "Nope") }
            await #expect(throws: missing) { try await store.query(QuerySpec(soupName: "Nope")) }
            await #expect(throws: missing) { try await store.count(QuerySpec(soupName: "Nope")) }
            await #expect(throws: missing) { try await store.retrieve(ids: [1], from: "Nope") }
            await #expect(throws: missing) { try await store.dirtyEntries(in: "Nope") }
            await #expect(throws: missing) { try await store.entries(in: "Nope") }
            await #expect(throws: missing) { try await store.counts(of: "Nope") }
            await #expect(throws: missing) { try await store.delete(ids: [1], from: "Nope") }
            await #expect(throws: missing) { try await store.delete(matching: QuerySpec(soupName: "Nope")) }
            await #expect(throws: missing) { try await store.clearSoup(named: "Nope") }
            await #expect(throws: missing) { try await store.dropSoup(named: "Nope") }
            await #expect(throws: missing) { try await store.smartQuery("SELECT {Nope:_soup} FROM {Nope}") }
            #expect(missing.description == "no soup named \"Nope\"")
        }
    }

    @Test func addingIndexesToAnExistingSoupBackfillsThem() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Name", .string)))
            var input: [JSONObject] = []
            for i in 1...20 {
                input.append(entry([
                    "Name": .string("n\(i)"), "Amount": .integer(Int64(i * 10)), "Score": .double(Double(i) / 4),
                    "Description": .string(i % 2 == 0 ? "even quick fox \(i)" : "odd lazy dog \(i)"),
                    "Nested": ["Code": .string("C\(i % 3)")], "Tag": .string("t\(i % 5)"),
                ]))
            }
            try await store.upsert(input, into: "S")
            let added = soup(
                "S", ("Name", .string), ("Amount", .integer), ("Score", .floating), ("Description", .fullText),
                ("Nested.Code", .json1), ("Tag", .string))
            #expect(try await store.registerSoup(added) == false)
            #expect(try await store.soupSpec(named: "S") == added)

            let amount = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: "Amount", matchKey: 70)))
            #expect(values(amount, "Name") == ["n7"])
            let score = try await store.query(QuerySpec(soupName: "S", kind: .range(path: "Score", beginKey: 1.0, endKey: 2.0)))
            #expect(values(score, "Name") == ["n4", "n5", "n6", "n7", "n8"])
            let fox = try await store.count(QuerySpec(soupName: "S", kind: .match(path: "Description", matchKey: "fox")))
            #expect(fox == 10)
            let code = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: "Nested.Code", matchKey: "C0")))
            #expect(values(code, "Name") == ["n3", "n6", "n9", "n12", "n15", "n18"])
            let tag = try await store.query(QuerySpec(soupName: "S", kind: .exact(path: "Tag", matchKey: "t0")))
            #expect(values(tag, "Name") == ["n5", "n10", "n15", "n20"])

            // The backfilled columns are real columns: Smart SQL on them reads the stored values.
            let rows = try await store.smartQuery("SELECT {S:Amount}, {S:Tag} FROM {S} WHERE {S:Name} = 'n3'")
            #expect(rows == [[30, "t3"]])

            // New entries keep filling the new indexes.
            try await store.upsert([entry(["Name": "n21", "Amount": 70, "Description": "another fox"])], into: "S")
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .exact(path: "Amount", matchKey: 70))) == 2)
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .match(path: "Description", matchKey: "fox"))) == 11)
        }
    }

    @Test func addingAFullTextIndexToASoupThatHasOne() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Title", .fullText)))
            try await store.upsert([entry(["Title": "alpha", "Body": "beta"]), entry(["Title": "gamma", "Body": "alpha"])], into: "S")
            try await store.registerSoup(soup("S", ("Title", .fullText), ("Body", .fullText)))
            let title = try await store.query(QuerySpec(soupName: "S", kind: .match(path: "Title", matchKey: "alpha")))
            #expect(values(title, "Title") == ["alpha"])
            let body = try await store.query(QuerySpec(soupName: "S", kind: .match(path: "Body", matchKey: "alpha")))
            #expect(values(body, "Title") == ["gamma"])
            let either = try await store.count(QuerySpec(soupName: "S", kind: .match(path: nil, matchKey: "alpha")))
            #expect(either == 2)
        }
    }

    @Test func dropSoupRemovesItAndItsEntries() async throws {
        try await withStore { (store) async throws in
            let spec = soup("S", ("Name", .string), ("Text", .fullText))
            try await store.registerSoup(spec)
            try await store.registerSoup(soup("Other", ("Name", .string)))
            try await store.upsert([entry(["Name": "a", "Text": "hello"])], into: "S")
            try await store.upsert([entry(["Name": "b"])], into: "Other")
            try await store.dropSoup(named: "S")
            #expect(try await store.hasSoup(named: "S") == false)
            await #expect(throws: SoupStoreError.unknownSoup("S")) { try await store.query(QuerySpec(soupName: "S")) }
            #expect(try await store.soupSpecs().map(\.name) == ["Other"])
            #expect(try await store.count(QuerySpec(soupName: "Other")) == 1)
            // The name can be registered again and starts empty.
            #expect(try await store.registerSoup(spec) == true)
            #expect(try await store.count(QuerySpec(soupName: "S")) == 0)
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .match(path: nil, matchKey: "hello"))) == 0)
        }
    }

    @Test func clearSoupKeepsTheSoupAndDoesNotReuseIds() async throws {
        try await withStore { (store) async throws in
            try await store.registerSoup(soup("S", ("Name", .string), ("Text", .fullText)))
            let first = try await store.upsert([entry(["Name": "a", "Text": "hello"]), entry(["Name": "b", "Text": "world"])], into: "S")
            #expect(ids(first) == [1, 2])
            try await store.clearSoup(named: "S")
            #expect(try await store.hasSoup(named: "S"))
            #expect(try await store.count(QuerySpec(soupName: "S")) == 0)
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .match(path: nil, matchKey: "hello"))) == 0)
            let second = try await store.upsert([entry(["Name": "c", "Text": "hello again"])], into: "S")
            #expect(ids(second) == [3])
            #expect(try await store.count(QuerySpec(soupName: "S", kind: .match(path: nil, matchKey: "hello"))) == 1)
        }
    }
}

@Suite struct StoreFileTests {
    @Test func openForReadingAMissingStoreFails() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("none.sqlite").path
        #expect(throws: SoupStoreError.storeMissing(path)) { try SoupStore.openForReading(path: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func storeInANewSubdirectoryIsCreated() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a/b/store.sqlite").path
        let store = try SoupStore(path: path)
        try await store.registerSoup(soup("S", ("Name", .string)))
        try store.close()
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func reopenedAndReadOnlyStoresSeeTheData() async throws {
        try await withStore { (store, directory) async throws in
            try await store.registerSoup(soup("S", ("Name", .string)))
            try await store.upsert([entry(["Name": "a"]), entry(["Name": "b"])], into: "S")
            let reader = try SoupStore.openForReading(path: store.path)
            #expect(values(try await allEntries(reader, "S"), "Name") == ["a", "b"])
            await #expect(throws: (any Error).self) { try await reader.upsert([entry(["Name": "c"])], into: "S") }
            try reader.close()

            let copyPath = directory.appendingPathComponent("copy.sqlite").path
            try store.copy(to: copyPath)
            try await store.upsert([entry(["Name": "after copy"])], into: "S")
            let copy = try SoupStore(path: copyPath)
            #expect(values(try await allEntries(copy, "S"), "Name") == ["a", "b"])
            #expect(try await copy.soupSpec(named: "S") == soup("S", ("Name", .string)))
            try copy.close()
        }
    }
}
