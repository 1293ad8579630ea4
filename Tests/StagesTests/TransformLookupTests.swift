import Foundation
import JSON
import Soups
import Stages
import Testing

/// A transform's `lookups` (SPEC §3c) against the emulator: record types by `DeveloperName` per
/// object, users by e-mail under a `where`, each `otherwise`, ambiguous keys, quotes in keys, and
/// thousands of records resolved in a handful of queries.
@Suite struct TransformLookupTests {
    /// The sample org with record types on Account and Contact (both have a `Partner`), users
    /// (one e-mail shared by an active and an inactive user, one by two active users) and
    /// `accounts` accounts named `Account 0`… plus one with a quote in its name.
    static func seed(in directory: String, accounts: Int = 0) throws -> String {
        let sample = try JSONParser.parse(String(contentsOfFile: SyncHarness.seed, encoding: .utf8))
        guard var root = sample.objectValue, var objects = root["objects"]?.arrayValue, var records = root["records"]?.arrayValue else {
            throw StageFailure(.failed, "the sample seed has no objects or records")
        }
        for index in objects.indices {
            guard var object = objects[index].objectValue else { continue }
            switch object["name"]?.stringValue {
            case "Account": object["recordTypes"] = [["developerName": "Partner", "name": "Partner"], ["developerName": "Customer", "name": "Customer"]]
            case "Contact": object["recordTypes"] = [["developerName": "Partner", "name": "Partner Contact"], ["developerName": "Staff", "name": "Staff"]]
            default: break
            }
            objects[index] = .object(object)
        }
        func user(_ name: String, _ email: String, active: Bool) -> JSONValue {
            ["type": "User", "fields": ["Username": .string(name + "@corp.test"), "Name": .string(name), "Email": .string(email), "IsActive": .bool(active)]]
        }
        records += [user("ada", "ada@corp.test", active: true), user("ada.old", "ada@corp.test", active: false),
                    user("twin1", "twins@corp.test", active: true), user("twin2", "twins@corp.test", active: true)]
        records.append(["type": "Account", "fields": ["Name": "O'Brien & Sons"]])
        for number in 0..<accounts { records.append(["type": "Account", "fields": ["Name": .string("Account \(number)")]]) }
        root["objects"] = .array(objects)
        root["records"] = .array(records)
        return try write(JSONValue.object(root).jsonString, to: "seed.json", in: directory)
    }

    struct Run {
        var outcome: RunOutcome
        var records: [JSONObject]
        var rejects: String
        var queries: Int
    }

    /// `csv` through a transform with `settings`, against an emulator started from ``seed(in:accounts:)``.
    static func run(csv: String, settings: String, accounts: Int = 0, variables: String = "", dryRun: Bool = false,
                    check: (SyncHarness, Run) async throws -> Void) async throws {
        let seedDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: seedDirectory) }
        let bench = try await SyncHarness(seed: try seed(in: seedDirectory, accounts: accounts))
        defer { Task { await bench.close() } }
        _ = try write(csv, to: "legacy.csv", in: bench.directory)
        let pipeline = try bench.pipeline(syncs: "[]", stages: """
            [ { "id": "legacy", "type": "extract.csv", "file": "legacy.csv" },
              { "id": "shape", "type": "transform", "from": "legacy", \(settings) } ]
            """)
        let before = try await queries(bench)
        let outcome = try await bench.run(pipeline, dryRun: dryRun)
        let records = dryRun ? [] : try await SoupStore.openForReading(path: pipeline.store).datasets.records("shape", limit: 20_000).compactMap(\.record.objectValue)
        let rejects = (try? String(contentsOfFile: outcome.report.reportDir + "/rejects/shape.csv", encoding: .utf8)) ?? ""
        try await check(bench, Run(outcome: outcome, records: records, rejects: rejects, queries: try await queries(bench) - before))
    }

    static func queries(_ bench: SyncHarness) async throws -> Int {
        Int(await bench.stats()["requests"]?["byKind"]?["query"]?.integerValue ?? 0)
    }

    static func recordTypes(_ bench: SyncHarness) async throws -> [String: String] {
        var ids: [String: String] = [:]
        for record in try await bench.query("SELECT Id, SobjectType, DeveloperName FROM RecordType") {
            ids["\(record["SobjectType"]?.stringValue ?? "").\(record["DeveloperName"]?.stringValue ?? "")"] = record["Id"]?.stringValue
        }
        return ids
    }

    static func userId(_ bench: SyncHarness, _ username: String) async throws -> String? {
        try await bench.query("SELECT Id FROM User WHERE Username = '\(username)'").first?["Id"]?.stringValue
    }

    @Test func recordTypesByDeveloperNamePerObjectAndUsersByEmail() async throws {
        let csv = "Key,Kind,Type,Owner\n1,Contact,Partner,ADA@corp.test\n2,Account,Partner,ada@corp.test\n3,Contact,Staff,ada@corp.test\n4,Account,Customer,ada@corp.test\n"
        try await Self.run(csv: csv, settings: """
            "lookups": [ { "field": "RecordTypeId", "sobjectType": "RecordType", "match": { "SobjectType": "Kind", "DeveloperName": "Type" } },
                         { "field": "OwnerId", "sobjectType": "User", "match": { "Email": "Owner" }, "where": "IsActive = true" } ]
            """) { bench, run in
            #expect(run.outcome.exitCode == 0, "\(run.outcome.report.stages) \(run.rejects)")
            let types = try await Self.recordTypes(bench)
            let ada = try await Self.userId(bench, "ada@corp.test")
            #expect(ada != nil)
            let byKey = Dictionary(uniqueKeysWithValues: run.records.map { ($0["Key"]?.stringValue ?? "", $0) })
            for (key, type) in [("1", "Contact.Partner"), ("2", "Account.Partner"), ("3", "Contact.Staff"), ("4", "Account.Customer")] {
                #expect(byKey[key]?["RecordTypeId"]?.stringValue == types[type], "row \(key): \(type)")
                // The inactive user with the same e-mail is passed over; case does not matter (SOQL's = ignores it).
                #expect(byKey[key]?["OwnerId"]?.stringValue == ada, "row \(key)")
            }
            #expect(Set(types.values).count == types.count && types["Contact.Partner"] != types["Account.Partner"])
            #expect(run.queries == 2, "one query a lookup: \(run.queries)")
        }
    }

    @Test func everyOtherwise() async throws {
        let csv = "Key,Owner,OwnerId\n1,ada@corp.test,005KEEP\n2,ghost@corp.test,005KEEP\n"
        func lookup(_ otherwise: String) -> String {
            #""lookups": [ { "field": "OwnerId", "sobjectType": "User", "match": { "Email": "Owner" }, "where": "IsActive = true"\#(otherwise) } ]"#
        }
        let cases: [(String, String, (JSONValue?) -> Bool)] = [
            ("", "reject", { _ in false }),
            (#", "otherwise": "null""#, "null", { $0 == .null }),
            (#", "otherwise": "keep""#, "keep", { $0 == "005KEEP" }),
            (#", "otherwise": "'005' & 'FORMULA'""#, "a formula", { $0 == "005FORMULA" }),
            (#", "otherwise": ":DEFAULT_OWNER""#, "a bind", { $0 == "005DEFAULT" }),
        ]
        for (otherwise, name, expected) in cases {
            let seedDirectory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: seedDirectory) }
            let bench = try await SyncHarness(seed: try Self.seed(in: seedDirectory))
            _ = try write(csv, to: "legacy.csv", in: bench.directory)
            let pipeline = try loadPipeline("""
                { "org": { "instanceUrl": "\(bench.org.instanceURL)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
                  "stages": [ { "id": "legacy", "type": "extract.csv", "file": "legacy.csv" },
                              { "id": "shape", "type": "transform", "from": "legacy", \(lookup(otherwise)) } ] }
                """, in: bench.directory, variables: ["TOKEN": bench.token, "DEFAULT_OWNER": "005DEFAULT"])
            let outcome = try await bench.run(pipeline)
            let records = try await SoupStore.openForReading(path: pipeline.store).datasets.records("shape").compactMap(\.record.objectValue)
            let ada = try await Self.userId(bench, "ada@corp.test")
            #expect(records.first { $0["Key"] == "1" }?["OwnerId"]?.stringValue == ada, "\(name): a key that matches")
            let ghost = records.first { $0["Key"] == "2" }
            if name == "reject" {
                let rejects = try String(contentsOfFile: outcome.report.reportDir + "/rejects/shape.csv", encoding: .utf8)
                #expect(ghost == nil && outcome.exitCode == 3)
                #expect(rejects.contains("lookups[0] (OwnerId): no User has Email = 'ghost@corp.test'"), "\(rejects)")
            } else {
                #expect(outcome.exitCode == 0 && expected(ghost?["OwnerId"]), "\(name): \(ghost ?? [:])")
            }
            await bench.close()
        }
    }

    @Test func ambiguousKeysAndKeysWithQuotes() async throws {
        let csv = "Key,Owner,Company\n1,twins@corp.test,O'Brien & Sons\n2,ada@corp.test,\"O'Brien' OR Name != 'x\"\n"
        try await Self.run(csv: csv, settings: """
            "lookups": [ { "field": "OwnerId", "sobjectType": "User", "match": { "Email": "Owner" }, "where": "IsActive = true" },
                         { "field": "AccountId", "sobjectType": "Account", "match": { "Name": "Company" } } ]
            """) { bench, run in
            #expect(run.outcome.exitCode == 3)
            #expect(run.rejects.contains("lookups[0] (OwnerId): 2 User records have Email = 'twins@corp.test' (ambiguous)"), "\(run.rejects)")
            // A quote in a key is a character of the value: it neither breaks nor widens the query.
            #expect(run.rejects.contains(#"lookups[1] (AccountId): no Account has Name = 'O\'Brien\' OR Name != \'x'"#), "\(run.rejects)")
            #expect(run.records.isEmpty, "both rows rejected: \(run.records)")
        }
        let csv2 = "Key,Company\n1,O'Brien & Sons\n"
        try await Self.run(csv: csv2, settings: #""lookups": [ { "field": "AccountId", "sobjectType": "Account", "match": { "Name": "Company" } } ]"#) { bench, run in
            let id = try await bench.query("SELECT Id FROM Account WHERE Name = 'O\\'Brien & Sons'").first?["Id"]?.stringValue
            #expect(id != nil && run.records.first?["AccountId"]?.stringValue == id, "\(run.records) \(run.rejects)")
        }
    }

    @Test func tenThousandRecordsThreeHundredKeysInAHandfulOfQueries() async throws {
        var csv = "Key,Company\n"
        for row in 0..<10_000 { csv += "\(row),Account \(row % 300)\n" }
        try await Self.run(csv: csv, settings: #""lookups": [ { "field": "AccountId", "sobjectType": "Account", "match": { "Name": "Company" } } ]"#,
                           accounts: 300) { bench, run in
            #expect(run.outcome.exitCode == 0, "\(run.rejects.prefix(500))")
            #expect(run.records.count == 10_000 && run.records.allSatisfy { $0["AccountId"]?.stringValue?.hasPrefix("001") == true })
            let ids = try await bench.query("SELECT Id, Name FROM Account WHERE Name = 'Account 7'")
            #expect(run.records.first { $0["Key"] == "307" }?["AccountId"] == ids.first?["Id"])
            // Each key once a run (cached across batches), many keys a query.
            #expect(run.queries == 2, "300 keys of ~15 characters: two queries of at most 4,000 characters of values, not \(run.queries)")
        }
    }

    @Test func aDryRunLooksUpAndReportsWhatWouldNotResolve() async throws {
        let csv = "Key,Owner\n1,ada@corp.test\n2,ghost@corp.test\n"
        try await Self.run(csv: csv, settings: #""lookups": [ { "field": "OwnerId", "sobjectType": "User", "match": { "Email": "Owner" } } ]"#,
                           dryRun: true) { bench, run in
            #expect(run.outcome.exitCode == 3, "\(run.outcome.report.stages)")
            #expect(run.rejects.contains("no User has Email = 'ghost@corp.test'"), "\(run.rejects)")
            #expect(run.queries == 1)
            let writes = await bench.stats()["requests"]?["writes"]?.integerValue
            #expect(writes == 0)
        }
    }
}
