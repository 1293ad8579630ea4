import Connectors
import Foundation
import JSON
import OrgEmulator
import Soups
import Testing

/// A sync up killed (SIGKILL) in the middle of its requests, then run again: every record reaches
/// the org exactly once — confirmed writes are not sent again and creates whose answers died with
/// the process are found through the journal, not duplicated.
@Suite struct SyncUpKillTests {
    @Test func aKilledSyncUpResumesWithoutDuplicates() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        let root = PipelineCLITests.packageRoot
        let count = 200
        try ("Name\n" + (0..<count).map { "Kill \($0)" }.joined(separator: "\n") + "\n")
            .write(toFile: directory + "/accounts.csv", atomically: true, encoding: .utf8)
        try #"{ "latencyMs": 80 }"#.write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
        try """
            { "name": "kill", "store": "store.sqlite",
              "org": { "emulator": { "seed": "\(root)/samples/org/seed.json", "faults": "faults.json" } },
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" } ] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "rest" },
                           "options": { "fieldlist": ["Name"] } } ],
              "stages": [
                { "id": "csv", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                { "id": "stage", "type": "stage", "from": "csv", "soup": "Accounts", "matchOn": "Name" },
                { "id": "mark", "type": "markDirty", "after": ["stage"], "soup": "Accounts", "as": "created" },
                { "id": "up", "type": "syncUp", "after": ["mark"], "sync": "up", "maxInFlight": 2 } ] }
            """.write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        let store = directory + "/store.sqlite"

        // Once the sync up runs, entries leave the dirty set as the org confirms them: kill it part-way.
        let synced = try await PipelineCLITests.runAndKill(directory + "/pipeline.json", store: store, threshold: 10) { reader in
            guard (try? await reader.sync(named: "up"))?.status == .running, let counts = try? await reader.counts(of: "Accounts") else { return 0 }
            return counts.total - counts.dirty
        }
        #expect(synced >= 10 && synced < count, "killed part-way (\(synced) of \(count) confirmed)")

        let again = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json", "--only", "up"])
        #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
        let entries = try await SoupStore.openForReading(path: store).entries(in: "Accounts", limit: 1000)
        #expect(entries.count == count)
        #expect(entries.allSatisfy { !$0.isDirty && $0["Id"]?.stringValue?.hasPrefix("001") == true })

        // The org, opened on the database the embedded emulator kept.
        let emulator = try OrgEmulator(configuration: .init(databasePath: store + ".org.sqlite", seedPath: root + "/samples/org/seed.json"))
        let running = try await emulator.start()
        let client = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: running.instanceURL, auth: .accessToken(accessToken: emulator.accessToken)))
        var names: [String] = []
        for try await record in client.query("SELECT Name FROM Account WHERE Name LIKE 'Kill %'") { names.append(record["Name"]?.stringValue ?? "") }
        await client.shutdown()
        await running.stop()
        #expect(names.count == count, "each record created exactly once")
        #expect(Set(names).count == count)
    }
}
