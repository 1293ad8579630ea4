import Foundation
import JSON
import Soups
import Testing

/// `--allow-production`: a run that writes to a production org is refused before anything
/// changes, its dry run predicts the refusal, and a read-only run may read any org.
@Suite struct ProductionGuardTests {
    /// A folder with a production org's seed, a CSV of two accounts and the two pipelines.
    static func setUp() throws -> (directory: String, reader: String, writer: String) {
        let directory = try PipelineCLITests.temporaryDirectory()
        let seedData = try #require(FileManager.default.contents(atPath: PipelineCLITests.packageRoot + "/samples/org/seed.json"))
        var seed = try #require(JSONParser.parse(seedData).value.objectValue)
        var org = seed["org"]?.objectValue ?? JSONObject()
        org["isSandbox"] = false
        seed["org"] = .object(org)
        try JSONValue.object(seed).jsonString.write(toFile: directory + "/seed.json", atomically: true, encoding: .utf8)
        try "Name\r\nProd One\r\nProd Two\r\n".write(toFile: directory + "/accounts.csv", atomically: true, encoding: .utf8)
        let common = """
            "org": { "emulator": { "seed": "seed.json" } }, "store": "store.sqlite",
            "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" } ] } ],
            "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts",
                         "target": { "type": "collection", "createFieldlist": ["Name"] }, "options": { "mergeMode": "OVERWRITE" } } ]
            """
        try """
            { "name": "reader", \(common), "stages": [
                { "id": "read", "type": "extract.soql", "query": "SELECT Id, Name FROM Account" } ] }
            """.write(toFile: directory + "/reader.json", atomically: true, encoding: .utf8)
        try """
            { "name": "writer", \(common), "stages": [
                { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                { "id": "stage", "type": "stage", "from": "csv", "soup": "Accounts", "matchOn": "Name" },
                { "id": "mark", "type": "markDirty", "after": ["stage"], "soup": "Accounts", "as": "created" },
                { "id": "up", "type": "syncUp", "after": ["mark"], "sync": "up" } ] }
            """.write(toFile: directory + "/writer.json", atomically: true, encoding: .utf8)
        return (directory, directory + "/reader.json", directory + "/writer.json")
    }

    static func entries(_ store: String) async throws -> Int {
        guard FileManager.default.fileExists(atPath: store) else { return 0 }
        let soups = try SoupStore.openForReading(path: store)
        defer { try? soups.close() }
        guard try await soups.hasSoup(named: "Accounts") else { return 0 }
        return try await soups.counts(of: "Accounts").total
    }

    @Test func writesToProductionAreRefusedBeforeAnythingChanges() async throws {
        let (directory, reader, writer) = try Self.setUp()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/store.sqlite"
        let orgDatabase = store + ".org.sqlite"

        let read = try PipelineCLITests.pipeline(["run", reader, "--quiet"])
        #expect(read.exitCode == 0, "a read-only run may read production: \(read.stderr)")

        let accountsBefore = PipelineCLITests.orgRecordCount(orgDatabase, types: ["Account"])
        let refused = try PipelineCLITests.pipeline(["run", writer])
        #expect(refused.exitCode == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("is a production org (Organization.IsSandbox is false); writes are refused unless you pass --allow-production"))
        #expect(try await Self.entries(store) == 0, "refused before the local stages staged anything")

        let dryRun = try PipelineCLITests.pipeline(["run", writer, "--dry-run"])
        #expect(dryRun.exitCode == 2, "the dry run predicts the refusal")
        #expect(dryRun.stderr.contains("a live run would be refused"))

        let plan = try PipelineCLITests.pipeline(["run", writer, "--dry-run", "--allow-production"])
        #expect(plan.exitCode == 0, "\(plan.stderr)")
        #expect(PipelineCLITests.orgRecordCount(orgDatabase, types: ["Account"]) == accountsBefore)

        let allowed = try PipelineCLITests.pipeline(["run", writer, "--allow-production"])
        #expect(allowed.exitCode == 0, "\(allowed.stderr)")
        #expect(PipelineCLITests.orgRecordCount(orgDatabase, types: ["Account"]) == accountsBefore + 2)
    }
}
