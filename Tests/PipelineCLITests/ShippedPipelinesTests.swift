import Foundation
import GRDB
import JSON
import Soups
import Testing

/// The three shipped jobs (issue 16), run as documented on a fresh store: the migration dry run
/// writes nothing, the bulk load's report agrees with the org and the soups, and the nightly sync
/// sends nothing once nothing changed.
@Suite struct ShippedPipelinesTests {
    static let root = PipelineCLITests.packageRoot
    /// Request kinds that write to the org.
    static let writeKinds: Set<String> = ["composite", "graph", "tree", "collections", "bulk", "sobject", "batch"]

    /// A shipped pipeline with its paths made absolute and its store (and so the org's database) in `directory`.
    static func copy(_ name: String, into directory: String) throws -> String {
        var text = try String(contentsOfFile: root + "/pipelines/\(name).json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"../.pipeline/crm.sqlite\"", with: "\"\(directory)/crm.sqlite\"")
        text = text.replacingOccurrences(of: "\"../", with: "\"\(root)/")
        let path = directory + "/\(name).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs a pipeline; returns its exit code and its `report.json`.
    static func run(_ pipeline: String) async throws -> (exitCode: Int32, report: JSONObject, directory: String) {
        let result = try await PipelineCLITests.pipelineInBackground(["run", pipeline, "--quiet"], cwd: "/")
        let directory = String(result.stdout.split(separator: "\n").last ?? "")
        let data = try #require(FileManager.default.contents(atPath: directory + "/report.json"), "\(result.stderr)")
        return (result.exitCode, try #require(JSONParser.parse(data).value.objectValue), directory)
    }

    static func stage(_ report: JSONObject, _ id: String) -> JSONObject {
        report["stages"]?.arrayValue?.first { $0["id"]?.stringValue == id }?.objectValue ?? JSONObject()
    }

    static func count(_ report: JSONObject, _ id: String, _ key: String, object: String? = nil) -> Int {
        let stage = stage(report, id)
        let counts = object.map { stage["byObject"]?[$0] } ?? stage["counts"]
        return Int(counts?[key]?.integerValue ?? 0)
    }

    static func writes(_ report: JSONObject) -> [String: Int64] {
        (report["api"]?["byKind"]?.objectValue ?? JSONObject()).reduce(into: [:]) { kinds, member in
            if writeKinds.contains(member.key) { kinds[member.key] = member.value.integerValue ?? 0 }
        }
    }

    /// The store's files, hashed: a dry run must leave them as they were.
    static func fingerprint(_ store: String) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal"] { files[suffix] = FileManager.default.contents(atPath: store + suffix) }
        return files
    }

    static func orgCounts(_ directory: String) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: ["Account", "Contact", "Opportunity", "Case"].map {
            ($0, PipelineCLITests.orgRecordCount(directory + "/crm.sqlite.org.sqlite", types: [$0]))
        })
    }

    /// In the org: accounts owned by one of the seed's active users (not the running user), and
    /// opportunities by record type.
    static func lookedUp(_ directory: String) throws -> (owned: Int, typed: (renewals: Int, newBusiness: Int)) {
        let queue = try DatabaseQueue(path: directory + "/crm.sqlite.org.sqlite")
        defer { try? queue.close() }
        return try queue.read { db in
            let owned = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM records a JOIN records u ON u.id = json_extract(a.data, '$.OwnerId')
                WHERE a.type = 'Account' AND u.type = 'User' AND json_extract(u.data, '$.IsActive') AND json_extract(u.data, '$.Username') != 'demo@syncpipeline.dev'
                """) ?? 0
            func typed(_ developerName: String) throws -> Int {
                try Int.fetchOne(db, sql: """
                    SELECT COUNT(*) FROM records o JOIN records t ON t.id = json_extract(o.data, '$.RecordTypeId')
                    WHERE o.type = 'Opportunity' AND t.type = 'RecordType' AND json_extract(t.data, '$.DeveloperName') = ?
                    """, arguments: [developerName]) ?? 0
            }
            return (owned, (try typed("Renewal"), try typed("New_Business")))
        }
    }

    /// Every record of the org's database, as stored (id, data, deleted flag, modstamp), hashed.
    static func orgRecords(_ directory: String) -> Int {
        guard let queue = try? DatabaseQueue(path: directory + "/crm.sqlite.org.sqlite") else { return 0 }
        defer { try? queue.close() }
        let rows = (try? queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, data, isDeleted, systemModstamp FROM records ORDER BY id")
                .map { "\($0["id"] as String? ?? "")|\($0["data"] as String? ?? "")|\($0["isDeleted"] as Int64? ?? 0)|\($0["systemModstamp"] as Int64? ?? 0)" }
        }) ?? []
        return rows.hashValue
    }

    /// Entries of a soup: (with a server id, dirty).
    static func soupCounts(_ store: String, _ soup: String) async throws -> (synced: Int, dirty: Int) {
        let soupStore = try SoupStore.openForReading(path: store)
        defer { try? soupStore.close() }
        var synced = 0
        var dirty = 0
        var afterId: Int64 = 0
        while true {
            let page = try await soupStore.entries(in: soup, afterId: afterId, limit: 1000)
            guard let last = page.last?.soupEntryId else { break }
            afterId = last
            synced += page.filter { !SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") }.count
            dirty += page.filter(\.isDirty).count
        }
        return (synced, dirty)
    }

    @Test func theThreeJobsRunAsDocumented() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let dryRun = try Self.copy("migration-dry-run", into: directory)
        let load = try Self.copy("bulk-load", into: directory)
        let nightly = try Self.copy("nightly-sync", into: directory)

        // The dry run plans the load, bad rows included, and writes nothing to the org.
        let plan = try await Self.run(dryRun)
        #expect(plan.exitCode == 3, "a plan with rejections and refusals: \(plan.report)")
        #expect(plan.report["dryRun"] == .bool(true))
        #expect(Self.writes(plan.report).isEmpty, "no write request: \(Self.writes(plan.report))")
        let seed = Self.orgCounts(directory)
        #expect(Self.count(plan.report, "load", "created") > 10_000)
        #expect(FileManager.default.fileExists(atPath: plan.directory + "/Account-plan.csv"))
        // The plan shows the contacts masked: no real e-mail of the export reaches it.
        let contactPlan = try String(contentsOfFile: plan.directory + "/Contact-plan.csv", encoding: .utf8)
        #expect(!contactPlan.contains("noah.mbeki@cedar-holdings.example.com") && contactPlan.contains("@example."))

        // The load: every good row reaches the org once; the bad ones are reported with why.
        let loaded = try await Self.run(load)
        #expect(loaded.exitCode == 3, "\(loaded.report)")
        let org = Self.orgCounts(directory)
        for object in ["Account", "Contact", "Opportunity", "Case"] {
            #expect(org[object]! - seed[object]! == Self.count(loaded.report, "load", "created", object: object),
                    "the report's \(object) creates are the org's new records")
        }
        #expect(org["Account"]! - seed["Account"]! == 2_250)
        #expect(Self.count(loaded.report, "load", "failed") == 4, "no LastName, a bad email, a bad StageName, an Amount in words")
        #expect(Self.count(loaded.report, "stage-contacts", "rejected") == 1, "the contact of an unknown account")
        #expect(Self.count(loaded.report, "cases", "rejected") == 1, "the row cut short by a stray quote")
        #expect(Self.count(loaded.report, "shape-cases", "rejected") == 1, "a status code the map does not know")
        #expect(Self.count(loaded.report, "shape-opportunities", "rejected") == 2, "a close date that does not exist, a record type the org lacks")
        let rejected = try String(contentsOfFile: loaded.directory + "/rejects/shape-opportunities.csv", encoding: .utf8)
        #expect(rejected.contains("1202,set.CloseDate: DATE: 2026-02-31 is not a date,"), "the line in opportunities.csv: \(rejected)")
        #expect(rejected.contains("1502,lookups[0] (RecordTypeId): no RecordType has SobjectType = 'Opportunity' and DeveloperName = 'Upsell',"),
                "\(rejected)")
        // Owners found by e-mail among the active users (the inactive one's account falls back to
        // the running user), record types by developer name: every loaded opportunity has one.
        let (owned, typed) = try Self.lookedUp(directory)
        #expect(owned == 1_999, "CSV accounts owned by the seed's active users: \(owned)")
        // Without the lookup every opportunity would take the object's first (default) record type.
        #expect(typed.renewals > 1_000 && typed.newBusiness > 1_000, "opportunities by record type: \(typed)")
        let store = directory + "/crm.sqlite"
        for (soup, object) in [("Accounts", "Account"), ("Contacts", "Contact"), ("Opportunities", "Opportunity"), ("Cases", "Case")] {
            let counts = try await Self.soupCounts(store, soup)
            #expect(counts.synced == Self.count(loaded.report, "load", "created", object: object), "\(soup): every created record's entry holds its id")
            #expect(counts.dirty == Self.count(loaded.report, "load", "failed", object: object), "\(soup): only the failed entries stay dirty")
        }
        let html = try String(contentsOfFile: loaded.directory + "/report.html", encoding: .utf8)
        for text in ["Records by object", "REQUIRED_FIELD_MISSING", "INVALID_EMAIL_ADDRESS", "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
                     "href=\"Contact-error.csv\"", "Rejected rows", "class=\"track\""] {
            #expect(html.contains(text), "report.html shows \(text)")
        }
        #expect(!html.contains("<script"), "no script")

        // A dry run now leaves the store exactly as it was, and the org untouched.
        // The masked contacts are now planned as updates of the loaded ones: the plan reads their
        // dates in Composite requests of GETs (reads), so the org's records are compared whole.
        let before = Self.fingerprint(store)
        let orgBefore = Self.orgRecords(directory)
        let again = try await Self.run(dryRun)
        #expect(Self.writes(again.report).filter { $0.key != "composite" }.isEmpty)
        #expect(Self.count(again.report, "load", "updated") > 4_000, "the masked contacts would be updated")
        #expect(Self.fingerprint(store) == before, "the store is byte-for-byte unchanged")
        #expect(Self.orgCounts(directory) == org)
        #expect(Self.orgRecords(directory) == orgBefore, "no record of the org changed")

        // The refused changes are discarded; then the nightly sync has nothing to send, twice.
        for soup in ["Contacts", "Opportunities"] {
            let discard = try PipelineCLITests.pipeline(["discard", store, soup, "--failed"])
            #expect(discard.exitCode == 0, "\(discard.stderr)")
        }
        for night in 1...2 {
            let run = try await Self.run(nightly)
            #expect(run.exitCode == 0, "night \(night): \(run.report)")
            #expect(Self.writes(run.report).isEmpty, "night \(night) writes nothing: \(Self.writes(run.report))")
            #expect(Self.count(run.report, "up", "updated") == 0 && Self.count(run.report, "up", "created") == 0)
        }
        #expect(Self.orgCounts(directory) == org)
        let runs = try PipelineCLITests.pipeline(["runs", store])
        #expect(runs.stdout.contains("(discard)"), "the discards are recorded with the runs")
    }
}
