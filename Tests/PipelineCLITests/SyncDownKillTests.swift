import Foundation
import JSON
import Soups
import Testing

/// A sync down killed (SIGKILL) between pages: the store shows it STOPPED, and the next run resumes
/// it and ends with every record stored once.
@Suite struct SyncDownKillTests {
    @Test func aKilledSyncDownShowsStoppedAndResumes() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = PipelineCLITests.packageRoot
        let count = 3000
        var seed = try JSONParser.parse(String(contentsOfFile: root + "/samples/org/seed.json", encoding: .utf8)).objectValue!
        seed["records"] = .array((0..<count).map { ["type": "Account", "fields": ["Name": .string("K\($0)")]] })
        try JSONValue.object(seed).jsonString.write(toFile: directory + "/seed.json", atomically: true, encoding: .utf8)
        // After four requests the emulator answers no more: the sync cannot finish before the kill.
        try #"{ "stallAfterRequests": 4 }"#.write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
        try """
            { "name": "kill-down", "store": "store.sqlite",
              "org": { "emulator": { "seed": "seed.json", "faults": "faults.json" } },
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" } ] } ],
              "syncs": [ { "syncName": "down", "syncType": "syncDown", "soupName": "Accounts",
                           "target": { "type": "soql", "query": "SELECT Name FROM Account WHERE Name LIKE 'K%'", "maxBatchSize": 200 } } ],
              "stages": [ { "id": "down", "type": "syncDown", "sync": "down" } ] }
            """.write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        let store = directory + "/store.sqlite"

        try await PipelineCLITests.runAndKill(directory + "/pipeline.json") {
            await PipelineCLITests.entryCount(store, soup: "Accounts") >= 200
        }
        let stored = await PipelineCLITests.entryCount(store, soup: "Accounts")
        #expect(stored >= 200 && stored < count, "killed part-way (\(stored) of \(count) stored)")
        try "{}".write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)

        let shown = try PipelineCLITests.pipeline(["syncs", store, "--json"])
        let state = try JSONParser.parse(shown.stdout.split(separator: "\n").first.map(String.init) ?? "")
        #expect(state["status"] == "STOPPED", "the dead run's sync shows STOPPED: \(shown.stdout)")
        #expect((state["maxTimeStamp"]?.integerValue ?? -1) > 0, "the pages stored before the kill moved maxTimeStamp")

        let runs = try PipelineCLITests.pipeline(["runs", store])
        #expect(runs.stdout.contains(" killed "), "the killed run is listed: \(runs.stdout)")

        let again = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json"])
        #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stderr.contains("never finished (its process died); it is recorded as killed"))
        #expect(again.stderr.contains("RUNNING when its process died") || again.stdout.contains("RUNNING when its process died"))
        let entries = try await SoupStore.openForReading(path: store).entries(in: "Accounts", limit: 10_000)
        #expect(entries.count == count, "every record stored, none twice")
        #expect(Set(entries.compactMap { $0["Id"]?.stringValue }).count == count)
        let done = try PipelineCLITests.pipeline(["syncs", store, "--json"])
        #expect(try JSONParser.parse(done.stdout.split(separator: "\n").first.map(String.init) ?? "")["status"] == "DONE")
    }
}
