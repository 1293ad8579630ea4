import Foundation
import JSON
import Soups
import Stages
import Testing

/// `stage.matchOn` as a list of paths (SPEC §3c): entries match when every path is equal — a
/// composite natural key — across batches and runs; a record missing part of its key matches
/// nothing; every path must be indexed.
@Suite struct CompositeMatchTests {
    static let soups = """
        "soups": [ {"soupName": "People", "indexes": [{"path": "Id", "type": "string"}, {"path": "LastName", "type": "string"},
                                                      {"path": "Birthdate", "type": "string"}, {"path": "MailingPostalCode", "type": "string"}]} ]
        """
    static let stages = """
        [ { "id": "csv", "type": "extract.csv", "file": "people.csv", "sobjectType": "Contact" },
          { "id": "stage", "type": "stage", "from": "csv", "soup": "People", "matchOn": ["LastName", "Birthdate", "MailingPostalCode"] } ]
        """

    func run(_ csv: String, in directory: String) async throws -> (counts: [String: Int], entries: [JSONObject], rejects: String, store: String) {
        try write(csv, to: "people.csv", in: directory)
        let pipeline = try loadPipeline("{ \(Self.soups), \"stages\": \(Self.stages) }", in: directory)
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let entries = try await SoupStore.openForReading(path: pipeline.store).entries(in: "People", limit: 20_000)
        let rejects = (try? String(contentsOfFile: outcome.report.reportDir + "/rejects/stage.csv", encoding: .utf8)) ?? ""
        return (outcome.report.stages[1].counts, entries, rejects, pipeline.store)
    }

    @Test func aCompositeKeyThatMergesAndOneThatDoesNot() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await run("""
            LastName,Birthdate,MailingPostalCode,Email
            Silva,1990-04-01,10115,ada@old.test
            Silva,1985-12-31,10115,bea@old.test
            Okafor,1990-04-01,75001,uma@old.test

            """, in: directory)
        #expect(first.counts["created"] == 3 && first.entries.count == 3, "\(first.counts)")
        let ada = try #require(first.entries.first { $0["Email"] == "ada@old.test" })
        let second = try await run("""
            LastName,Birthdate,MailingPostalCode,Email
            Silva,1990-04-01,10115,ada@new.test
            Silva,1990-04-01,99999,another@new.test
            Silva,,10115,nobirth@new.test

            """, in: directory)
        // All three equal: merged into Ada. Another postal code, or a part of the key missing: new.
        #expect(second.counts["updated"] == 1 && second.counts["created"] == 2, "\(second.counts)")
        #expect(second.entries.count == 5)
        let merged = try #require(second.entries.first { $0["Id"] == ada["Id"] })
        #expect(merged["Email"] == "ada@new.test" && merged.soupEntryId == ada.soupEntryId)
        #expect(second.entries.filter { $0["LastName"] == "Silva" && $0["Birthdate"] == "1990-04-01" }.count == 2)
    }

    @Test func keysRepeatedInLaterBatchesMergeAndTwoEntriesOnOneKeyReject() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Batches of 1,000, 2,000 and 3,000 rows: rows 4,000–5,999 repeat the keys of rows 0–1,999.
        var csv = "LastName,Birthdate,MailingPostalCode,Seen\n"
        for row in 0..<6_000 { csv += "Name \(row % 2_000),2000-01-\(10 + (row / 2_000) % 2),\(row % 2_000),\(row)\n" }
        let loaded = try await run(csv, in: directory)
        #expect(loaded.counts["created"] == 4_000 && loaded.counts["updated"] == 2_000 && loaded.entries.count == 4_000, "\(loaded.counts)")
        let first = try #require(loaded.entries.first { $0["LastName"] == "Name 7" && $0["Birthdate"] == "2000-01-10" })
        #expect(first["Seen"] == "4007", "the later row's values won: \(first)")
        // A second entry on one key: a record with that key is rejected, naming the key.
        let store = try SoupStore(path: loaded.store)
        try await store.upsert([["LastName": "Name 7", "Birthdate": "2000-01-10", "MailingPostalCode": "7"]], into: "People")
        try store.close()
        let ambiguous = try await run("LastName,Birthdate,MailingPostalCode\nName 7,2000-01-10,7\n", in: directory)
        #expect(ambiguous.counts["rejected"] == 1, "\(ambiguous.counts)")
        #expect(ambiguous.rejects.contains(#"2 entries of People have LastName + Birthdate + MailingPostalCode = [""Name 7"",""2000-01-10"",""7""]"#),
                "\(ambiguous.rejects)")
    }

    /// `parent` with a list `key` and `matchOn`: a record finds its parent by a composite key.
    @Test func aParentFoundByACompositeKey() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await run("LastName,Birthdate,MailingPostalCode,Id\nSilva,1990-04-01,10115,003A\nSilva,1985-12-31,10115,003B\n", in: directory)
        try write("Subject,Surname,Born,Code\nA,Silva,1990-04-01,10115\nB,Silva,1985-12-31,10115\nC,Silva,1990-04-01,99999\n", to: "cases.csv", in: directory)
        let soups = Self.soups.replacingOccurrences(of: "\"soups\": [", with: """
            "soups": [ {"soupName": "Cases", "indexes": [{"path": "Id", "type": "string"}, {"path": "Subject", "type": "string"}]},
            """)
        let pipeline = try loadPipeline("""
            { \(soups), "stages": [
                { "id": "csv", "type": "extract.csv", "file": "cases.csv", "sobjectType": "Case" },
                { "id": "stage", "type": "stage", "from": "csv", "soup": "Cases", "matchOn": "Subject",
                  "parent": { "soup": "People", "key": ["Surname", "Born", "Code"], "matchOn": ["LastName", "Birthdate", "MailingPostalCode"],
                              "idField": "ContactId" } } ] }
            """, in: directory)
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let cases = try await SoupStore.openForReading(path: pipeline.store).entries(in: "Cases", limit: 10)
        #expect(outcome.report.stages[1].counts["created"] == 2 && outcome.report.stages[1].counts["rejected"] == 1)
        #expect(cases.first { $0["Subject"] == "A" }?["ContactId"] == "003A" && cases.first { $0["Subject"] == "B" }?["ContactId"] == "003B")
        #expect(cases.allSatisfy { $0["Surname"] == nil && $0["Born"] == nil && $0["Code"] == nil }, "the key's fields leave the record")
        let rejects = try String(contentsOfFile: outcome.report.reportDir + "/rejects/stage.csv", encoding: .utf8)
        #expect(rejects.contains(#"missing parent: Surname + Born + Code = [""Silva"",""1990-04-01"",""99999""]"#), "\(rejects)")
    }

    @Test func everyPathMustBeIndexed() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("LastName\nx\n", to: "people.csv", in: directory)
        let errors = loadErrors("{ \(Self.soups), \"stages\": \(Self.stages.replacingOccurrences(of: "\"MailingPostalCode\"]", with: "\"Phone\"]")) }", in: directory)
        #expect(errors.contains { $0.contains("stages[1].matchOn: soup \"People\" has no index on \"Phone\"") }, "\(errors)")
        let badShape = loadErrors("{ \(Self.soups), \"stages\": \(Self.stages.replacingOccurrences(of: "[\"LastName\", \"Birthdate\", \"MailingPostalCode\"]", with: "[\"LastName\", 3]")) }", in: directory)
        #expect(badShape.contains { $0.contains("stages[1].matchOn: must be an indexed path, or a list of distinct ones") }, "\(badShape)")
    }
}
