import Connectors
import Foundation
import JSON
import Soups
import Stages
import Testing

/// The graph sync-up target over the emulator: several levels, a self-lookup whose parent comes
/// later, references resolved across soups, a failed parent holding back its dependants, deletes
/// children first.
@Suite struct GraphSyncUpTests {
    static let sync = """
        [ { "syncName": "graph", "syncType": "syncUp", "soupName": "Accounts",
            "target": { "type": "graph", "objects": [
              { "soupName": "Cases", "sobjectType": "Case", "createFieldlist": ["Subject", "ContactId", "AccountId"],
                "references": [ { "field": "ContactId", "soup": "Contacts" }, { "field": "AccountId", "soup": "Accounts" } ] },
              { "soupName": "Contacts", "sobjectType": "Contact", "createFieldlist": ["LastName", "AccountId"],
                "references": [ { "field": "AccountId", "soup": "Accounts" } ] },
              { "soupName": "Accounts", "sobjectType": "Account", "createFieldlist": ["Name", "ParentId"],
                "references": [ { "field": "ParentId", "soup": "Accounts" } ] } ] },
            "options": { "mergeMode": "OVERWRITE" } } ]
        """
    static let stages = #"[ { "id": "up", "type": "syncUp", "sync": "graph" } ]"#

    @Test func threeLevelsAndASelfLookupWhoseParentComesLaterEndExact() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages)
        // The grandchild and the child account come before their parent in the soup.
        try await bench.put([
            SyncHarness.local("Account", "local_g", ["Name": "G grandchild", "ParentId": "local_c"]),
            SyncHarness.local("Account", "local_c", ["Name": "G child", "ParentId": "local_p"]),
            SyncHarness.local("Account", "local_p", ["Name": "G parent"]),
        ], into: "Accounts", pipeline)
        try await bench.put([
            SyncHarness.local("Contact", "local_k1", ["LastName": "G contact 1", "AccountId": "local_g"]),
            SyncHarness.local("Contact", "local_k2", ["LastName": "G contact 2", "AccountId": "local_p"]),
        ], into: "Contacts", pipeline)
        try await bench.put([
            SyncHarness.local("Case", "local_s1", ["Subject": "G case", "ContactId": "local_k1", "AccountId": "local_g"]),
        ], into: "Cases", pipeline)

        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["created"] == 6)
        #expect(outcome.report.stages[0].byObject["Account"]?["created"] == 3)

        let accounts = Dictionary(try await bench.query("SELECT Id, Name, ParentId FROM Account WHERE Name LIKE 'G %'").map {
            ($0["Name"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        #expect(accounts.count == 3)
        #expect(accounts["G child"]?["ParentId"] == accounts["G parent"]?["Id"])
        #expect(accounts["G grandchild"]?["ParentId"] == accounts["G child"]?["Id"])
        let contacts = Dictionary(try await bench.query("SELECT Id, LastName, AccountId FROM Contact WHERE LastName LIKE 'G contact%'").map {
            ($0["LastName"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        #expect(contacts["G contact 1"]?["AccountId"] == accounts["G grandchild"]?["Id"])
        #expect(contacts["G contact 2"]?["AccountId"] == accounts["G parent"]?["Id"])
        let cases = try await bench.query("SELECT ContactId, AccountId FROM Case WHERE Subject = 'G case'")
        #expect(cases.count == 1)
        #expect(cases.first?["ContactId"] == contacts["G contact 1"]?["Id"])
        #expect(cases.first?["AccountId"] == accounts["G grandchild"]?["Id"])

        for soup in ["Accounts", "Contacts", "Cases"] {
            let entries = try await bench.entries(soup, pipeline)
            #expect(entries.allSatisfy { !$0.isDirty }, "\(soup) clean")
            let links = entries.flatMap { entry in ["Id", "ParentId", "AccountId", "ContactId"].compactMap { entry[$0]?.stringValue } }
            #expect(!links.contains(where: SyncField.isLocalId), "no local id left in \(soup)")
        }
        // Nothing left to send.
        let again = try await bench.run(pipeline)
        #expect(again.exitCode == 0 && (again.report.stages[0].counts["created"] ?? 0) == 0)
    }

    @Test func aFailedParentHoldsBackItsDependantsAndNothingLeavesWithALocalId() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages)
        try await bench.put([
            SyncHarness.local("Account", "local_bad", ["Name": .null]),   // the org requires a Name
            SyncHarness.local("Account", "local_ok", ["Name": "F fine"]),
        ], into: "Accounts", pipeline)
        try await bench.put([
            SyncHarness.local("Contact", "local_under_bad", ["LastName": "F held", "AccountId": "local_bad"]),
            SyncHarness.local("Contact", "local_under_ok", ["LastName": "F sent", "AccountId": "local_ok"]),
            SyncHarness.local("Contact", "local_nowhere", ["LastName": "F orphan", "AccountId": "local_missing"]),
        ], into: "Contacts", pipeline)
        try await bench.put([
            SyncHarness.local("Case", "local_case", ["Subject": "F held too", "ContactId": "local_under_bad"]),
        ], into: "Cases", pipeline)

        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 3)
        let counts = outcome.report.stages[0].counts
        #expect(counts["created"] == 2, "the fine account and its contact")
        #expect(counts["failed"] == 4, "the account the org refused, and three records that could not be sent")
        #expect(try await bench.query("SELECT Id FROM Contact WHERE LastName LIKE 'F %'").count == 1)
        #expect(try await bench.query("SELECT Id FROM Case WHERE Subject LIKE 'F %'").isEmpty)

        let contacts = try await bench.entries("Contacts", pipeline)
        let held = try #require(contacts.first { $0["LastName"] == "F held" })
        #expect(held.isDirty && held.lastErrorCode == "UNRESOLVED_REFERENCE")
        let orphan = try #require(contacts.first { $0["LastName"] == "F orphan" })
        #expect(orphan.lastErrorCode == "UNRESOLVED_REFERENCE")
        #expect(orphan[SyncField.lastError]?.stringValue?.contains("which no soup of this sync holds") == true)
        let kase = try #require(try await bench.entries("Cases", pipeline).first)
        #expect(kase.isDirty && kase.lastErrorCode == "UNRESOLVED_REFERENCE")
    }

    @Test func deletesGoChildrenFirst() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages)
        let account = try await bench.serverRecord("Account", ["Name": "D parent"])
        let contact = try await bench.serverRecord("Contact", ["LastName": "D child", "AccountId": account["Id"]!])
        let kase = try await bench.serverRecord("Case", ["Subject": "D case", "ContactId": contact["Id"]!])
        try await bench.put([SyncHarness.flagged(account, SyncField.locallyDeleted)], into: "Accounts", pipeline)
        try await bench.put([SyncHarness.flagged(contact, SyncField.locallyDeleted)], into: "Contacts", pipeline)
        try await bench.put([SyncHarness.flagged(kase, SyncField.locallyDeleted)], into: "Cases", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["deleted"] == 3)
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'D parent'").isEmpty)
        for soup in ["Accounts", "Contacts", "Cases"] { #expect(try await bench.entries(soup, pipeline).isEmpty) }
    }
}
