import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Soups
import Testing

/// Parent-children sync ups without an external id, SIGKILLed again and again at points the
/// emulator makes certain (it stalls after a number of writes, so no run can finish first), some
/// of its answers dropped too, then run to the end: every record reaches the org exactly once,
/// under its own parent, and the soups agree with the org.
@Suite struct SyncUpKillTests {
    @Test func aChainOfKilledSyncUpsEndsExact() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = PipelineCLITests.packageRoot
        let environment = ProcessInfo.processInfo.environment
        let trees = environment["SOAK_KILL_TREES"].flatMap(Int.init) ?? 300
        let rounds = environment["SOAK_KILLS"].flatMap(Int.init) ?? 20
        var accounts = "Name\n"
        var contacts = "LastName,AccountName\n"
        for index in 0..<trees {
            accounts += "Kill \(index)\n"
            for child in 0..<3 { contacts += "Kill \(index)-C\(child),Kill \(index)\n" }
        }
        try accounts.write(toFile: directory + "/accounts.csv", atomically: true, encoding: .utf8)
        try contacts.write(toFile: directory + "/contacts.csv", atomically: true, encoding: .utf8)
        try """
            { "name": "kill", "store": "store.sqlite",
              "org": { "emulator": { "seed": "\(root)/samples/org/seed.json", "faults": "faults.json" } },
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" } ] },
                         { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                                { "path": "LastName", "type": "string" } ] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts",
                           "target": { "type": "parent_children", "relationshipType": "LOOKUP",
                             "parent": { "sobjectType": "Account", "soupName": "Accounts" },
                             "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
                             "createFieldlist": ["Name"], "childrenCreateFieldlist": ["LastName", "AccountId"] } } ],
              "stages": [
                { "id": "accounts", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                { "id": "stage-accounts", "type": "stage", "from": "accounts", "soup": "Accounts", "matchOn": "Name" },
                { "id": "contacts", "type": "extract.csv", "file": "contacts.csv", "sobjectType": "Contact" },
                { "id": "stage-contacts", "type": "stage", "from": "contacts", "after": ["stage-accounts"], "soup": "Contacts", "matchOn": "LastName",
                  "parent": { "soup": "Accounts", "key": "AccountName", "matchOn": "Name", "idField": "AccountId" } },
                { "id": "mark", "type": "markDirty", "after": ["stage-contacts"], "soup": "Accounts", "as": "auto" },
                { "id": "mark-contacts", "type": "markDirty", "after": ["stage-contacts"], "soup": "Contacts", "as": "auto" },
                { "id": "up", "type": "syncUp", "after": ["mark", "mark-contacts"], "sync": "up", "strategy": "composite", "maxInFlight": 2 } ] }
            """.write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        let store = directory + "/store.sqlite"
        let org = store + ".org.sqlite"

        let kills = try await Self.killChain(in: directory, rounds: rounds, until: trees * 4)
        #expect(kills >= min(5, rounds))
        print("soak: \(kills) kills of a \(trees)-tree sync up")

        try "{}".write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
        let again = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json", "--only", "up"])
        #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
        let report = try JSONParser.parse(String(contentsOfFile: again.stdout.split(separator: "\n").last.map(String.init)! + "/report.json", encoding: .utf8))
        let queries = report["api"]?["byKind"]?["query"]?.integerValue ?? 99
        print("soak: the run after \(kills) kills made \(queries) queries, \(report["api"]?["requests"]?.integerValue ?? 0) requests in all")
        #expect(queries <= 60, "reconciling costs a few queries, not one per record: \(report["api"] ?? .null)")

        let reader = try SoupStore.openForReading(path: store)
        let accountEntries = try await reader.entries(in: "Accounts", limit: 10_000)
        let contactEntries = try await reader.entries(in: "Contacts", limit: 10_000)
        try reader.close()
        #expect(accountEntries.count == trees && contactEntries.count == trees * 3)
        let all = accountEntries + contactEntries
        #expect(all.allSatisfy { !$0.isDirty }, "nothing left dirty")
        #expect(Set(all.compactMap { $0["Id"]?.stringValue }).count == all.count, "no two entries share an id")
        #expect(!all.contains { SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") || SyncField.isLocalId($0["AccountId"]?.stringValue ?? "") })

        // The org, opened on the database the embedded emulator kept.
        let reopened = try await TestOrg.start(databasePath: org)
        let client = try reopened.client()
        var orgAccounts: [String: String] = [:]
        for try await record in client.query("SELECT Id, Name FROM Account WHERE Name LIKE 'Kill %'") {
            #expect(orgAccounts.updateValue(record["Id"]!.stringValue!, forKey: record["Name"]!.stringValue!) == nil, "each account created once")
        }
        var orgContacts: [String: JSONObject] = [:]
        for try await record in client.query("SELECT Id, LastName, AccountId FROM Contact WHERE LastName LIKE 'Kill %'") {
            #expect(orgContacts.updateValue(record, forKey: record["Id"]!.stringValue!) == nil)
        }
        await client.shutdown()
        await reopened.stop()
        #expect(orgAccounts.count == trees)
        #expect(orgContacts.count == trees * 3, "each contact created once")
        #expect(Set(orgContacts.values.map { $0["LastName"]!.stringValue! }).count == trees * 3)
        for contact in orgContacts.values {
            let name = contact["LastName"]!.stringValue!
            let parent = String(name[..<name.range(of: "-C")!.lowerBound])
            #expect(contact["AccountId"]?.stringValue == orgAccounts[parent], "\(name) is under its own account")
        }
        for entry in contactEntries {
            #expect(orgContacts[entry["Id"]?.stringValue ?? ""]?["AccountId"] == entry["AccountId"], "the soup's link is the org's")
        }
    }

    /// The graph target under the same chain of kills: families of a parent account, a child
    /// account (self-lookup, staged before its parent) and a contact under the child.
    @Test func aChainOfKilledGraphSyncUpsEndsExact() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = PipelineCLITests.packageRoot
        let environment = ProcessInfo.processInfo.environment
        let families = (environment["SOAK_KILL_TREES"].flatMap(Int.init) ?? 300) / 3
        let rounds = (environment["SOAK_KILLS"].flatMap(Int.init) ?? 20) / 2
        var accounts = "Name,ParentName\n"
        var contacts = "LastName,AccountName\n"
        for index in 0..<families {
            accounts += "GKill child \(index),GKill parent \(index)\nGKill parent \(index),\n"
            contacts += "GKill \(index),GKill child \(index)\n"
        }
        try accounts.write(toFile: directory + "/accounts.csv", atomically: true, encoding: .utf8)
        try contacts.write(toFile: directory + "/contacts.csv", atomically: true, encoding: .utf8)
        try """
            { "name": "graph-kill", "store": "store.sqlite",
              "org": { "emulator": { "seed": "\(root)/samples/org/seed.json", "faults": "faults.json" } },
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" },
                                                               { "path": "ParentId", "type": "string" } ] },
                         { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                                { "path": "LastName", "type": "string" } ] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "graph", "objects": [
                  { "soupName": "Accounts", "sobjectType": "Account", "createFieldlist": ["Name", "ParentId"],
                    "references": [ { "field": "ParentId", "soup": "Accounts" } ] },
                  { "soupName": "Contacts", "sobjectType": "Contact", "createFieldlist": ["LastName", "AccountId"],
                    "references": [ { "field": "AccountId", "soup": "Accounts" } ] } ] } } ],
              "stages": [
                { "id": "accounts", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                { "id": "stage-accounts", "type": "stage", "from": "accounts", "soup": "Accounts", "matchOn": "Name",
                  "parent": { "soup": "Accounts", "key": "ParentName", "matchOn": "Name", "idField": "ParentId", "required": false } },
                { "id": "contacts", "type": "extract.csv", "file": "contacts.csv", "sobjectType": "Contact" },
                { "id": "stage-contacts", "type": "stage", "from": "contacts", "after": ["stage-accounts"], "soup": "Contacts", "matchOn": "LastName",
                  "parent": { "soup": "Accounts", "key": "AccountName", "matchOn": "Name", "idField": "AccountId" } },
                { "id": "mark", "type": "markDirty", "after": ["stage-contacts"], "soup": "Accounts", "as": "auto" },
                { "id": "mark-contacts", "type": "markDirty", "after": ["stage-contacts"], "soup": "Contacts", "as": "auto" },
                { "id": "up", "type": "syncUp", "after": ["mark", "mark-contacts"], "sync": "up", "strategy": "rest", "maxInFlight": 2 } ] }
            """.write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        let store = directory + "/store.sqlite"
        let org = store + ".org.sqlite"
        let kills = try await Self.killChain(in: directory, rounds: rounds, until: families * 3)
        try "{}".write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
        var again = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json", "--only", "up"])
        if again.exitCode != 0 { again = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json", "--only", "up"]) }
        #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
        print("soak: \(kills) kills of a \(families)-family graph sync up")

        let reader = try SoupStore.openForReading(path: store)
        let all = try await reader.entries(in: "Accounts", limit: 10_000) + reader.entries(in: "Contacts", limit: 10_000)
        try reader.close()
        #expect(all.count == families * 3 && all.allSatisfy { !$0.isDirty }, "every entry clean")
        #expect(!all.contains { entry in ["Id", "ParentId", "AccountId"].contains { SyncField.isLocalId(entry[$0]?.stringValue ?? "") } })

        let reopened = try await TestOrg.start(databasePath: org)
        let client = try reopened.client()
        var orgAccounts: [String: JSONObject] = [:]
        for try await record in client.query("SELECT Id, Name, ParentId FROM Account WHERE Name LIKE 'GKill %'") {
            #expect(orgAccounts.updateValue(record, forKey: record["Name"]!.stringValue!) == nil, "each account created once")
        }
        var orgContacts: [String: JSONObject] = [:]
        for try await record in client.query("SELECT Id, LastName, AccountId FROM Contact WHERE LastName LIKE 'GKill %'") {
            #expect(orgContacts.updateValue(record, forKey: record["LastName"]!.stringValue!) == nil, "each contact created once")
        }
        await client.shutdown()
        await reopened.stop()
        #expect(orgAccounts.count == families * 2 && orgContacts.count == families)
        for index in 0..<families {
            #expect(orgAccounts["GKill child \(index)"]?["ParentId"] == orgAccounts["GKill parent \(index)"]?["Id"])
            #expect(orgContacts["GKill \(index)"]?["AccountId"] == orgAccounts["GKill child \(index)"]?["Id"])
        }
    }

    /// A flat Bulk sync up whose jobs span pages (pages of 250, jobs of 600 rows), SIGKILLed while
    /// a job is part-way (the emulator holds each job after 300 rows; the embedded org dies with
    /// the run, so the next run finds no job and looks for its rows, from their send until now):
    /// each account reaches the org once.
    @Test func aChainOfKilledBulkSyncUpsEndsExact() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = PipelineCLITests.packageRoot
        let environment = ProcessInfo.processInfo.environment
        let records = (environment["SOAK_KILL_TREES"].flatMap(Int.init) ?? 300) * 4
        let rounds = (environment["SOAK_KILLS"].flatMap(Int.init) ?? 20) / 4
        var accounts = "Name,Industry\n"
        for index in 0..<records { accounts += "BKill \(index),\(index % 7 == 0 ? "Energy" : "")\n" }
        try accounts.write(toFile: directory + "/accounts.csv", atomically: true, encoding: .utf8)
        try """
            { "name": "bulk-kill", "store": "store.sqlite",
              "org": { "emulator": { "seed": "\(root)/samples/org/seed.json", "faults": "faults.json" } },
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" } ] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "createFieldlist": ["Name", "Industry"] } } ],
              "stages": [
                { "id": "accounts", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                { "id": "stage-accounts", "type": "stage", "from": "accounts", "soup": "Accounts", "matchOn": "Name" },
                { "id": "mark", "type": "markDirty", "after": ["stage-accounts"], "soup": "Accounts", "as": "auto" },
                { "id": "up", "type": "syncUp", "after": ["mark"], "sync": "up", "strategy": "bulk", "pageSize": 250, "bulkJobRecords": 600 } ] }
            """.write(toFile: directory + "/pipeline.json", atomically: true, encoding: .utf8)
        let store = directory + "/store.sqlite"
        let org = store + ".org.sqlite"
        var kills = 0
        for round in 0..<rounds {
            let before = PipelineCLITests.orgRecordCount(org, types: ["Account"])
            if before >= records { break }
            try #"{ "bulkPauseAfterRows": 300, "dropAfterCommitRate": 0.2, "seed": \#(round + 1) }"#
                .write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
            let reached = try await PipelineCLITests.runAndKill(directory + "/pipeline.json") {
                PipelineCLITests.orgRecordCount(org, types: ["Account"]) > before
            }
            #expect(reached, "run \(round) wrote to the org before it was killed")
            kills += 1
        }
        #expect(kills >= min(2, rounds))
        try "{}".write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
        let again = try PipelineCLITests.pipeline(["run", directory + "/pipeline.json", "--only", "up"])
        #expect(again.exitCode == 0, "\(again.stdout)\(again.stderr)")
        print("soak: \(kills) kills of a \(records)-record Bulk sync up")

        let reader = try SoupStore.openForReading(path: store)
        let entries = try await reader.entries(in: "Accounts", limit: 100_000)
        try reader.close()
        #expect(entries.count == records && entries.allSatisfy { !$0.isDirty }, "every entry clean")
        #expect(Set(entries.compactMap { $0["Id"]?.stringValue }).count == records, "no two entries share an id")
        #expect(!entries.contains { SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") })

        let reopened = try await TestOrg.start(databasePath: org)
        let client = try reopened.client()
        var orgAccounts: [String: String] = [:]
        for try await record in client.query("SELECT Id, Name FROM Account WHERE Name LIKE 'BKill %'") {
            #expect(orgAccounts.updateValue(record["Id"]!.stringValue!, forKey: record["Name"]!.stringValue!) == nil, "each account created once")
        }
        await client.shutdown()
        await reopened.stop()
        #expect(orgAccounts.count == records)
        for entry in entries {
            #expect(orgAccounts[entry["Name"]?.stringValue ?? ""] == entry["Id"]?.stringValue, "the soup's id is the org's")
        }
    }

    /// Runs `directory/pipeline.json` and SIGKILLs it, `rounds` times at most or until the org holds
    /// `target` accounts and contacts. Each run stalls after a few writes (some answers dropped) and
    /// is killed once the org holds more records than before it, so every run makes progress.
    /// Returns the number of kills.
    static func killChain(in directory: String, rounds: Int, until target: Int) async throws -> Int {
        let org = directory + "/store.sqlite.org.sqlite"
        var kills = 0
        for round in 0..<rounds {
            let before = PipelineCLITests.orgRecordCount(org, types: ["Account", "Contact"])
            if before >= target { break }
            try #"{ "stallAfterWrites": \#(1 + round % 3), "dropAfterCommitRate": 0.3, "seed": \#(round + 1) }"#
                .write(toFile: directory + "/faults.json", atomically: true, encoding: .utf8)
            let reached = try await PipelineCLITests.runAndKill(directory + "/pipeline.json") {
                PipelineCLITests.orgRecordCount(org, types: ["Account", "Contact"]) > before
            }
            #expect(reached, "run \(round) wrote to the org before it was killed")
            kills += 1
        }
        return kills
    }
}
