import Foundation
import JSON
import Soups
import Stages
import Testing

/// SPEC §4b's graph sync exactly as it is written: no sync-level `soupName` (a graph's objects
/// name their soups), no index on the reference fields (the product adds what it needs to replace
/// `local_` ids), and a polymorphic reference into a soup outside the graph.
@Suite struct GraphSpecExampleTests {
    static let soups = """
        [ { "soupName": "AccountSoup", "indexes": [ { "path": "Id", "type": "string" } ] },
          { "soupName": "ContactSoup", "indexes": [ { "path": "Id", "type": "string" } ] },
          { "soupName": "CaseSoup", "indexes": [ { "path": "Id", "type": "string" } ] },
          { "soupName": "OpportunitySoup", "indexes": [ { "path": "Id", "type": "string" } ] },
          { "soupName": "TaskSoup", "indexes": [ { "path": "Id", "type": "string" } ] } ]
        """
    static let sync = """
        [ { "syncName": "MigrationUp", "syncType": "syncUp",
            "target": { "type": "graph", "objects": [
                { "soupName": "AccountSoup", "sobjectType": "Account", "externalIdFieldName": "External_Id__c",
                  "createFieldlist": ["Name", "Industry", "ParentId"], "updateFieldlist": ["Name", "Industry"],
                  "references": [ { "field": "ParentId", "soup": "AccountSoup" } ] },
                { "soupName": "ContactSoup", "sobjectType": "Contact",
                  "references": [ { "field": "AccountId", "soup": "AccountSoup" } ] },
                { "soupName": "CaseSoup", "sobjectType": "Case",
                  "references": [ { "field": "ContactId", "soup": "ContactSoup" },
                                  { "field": "AccountId", "soup": "AccountSoup", "relationshipType": "MASTER_DETAIL" } ] },
                { "soupName": "TaskSoup", "sobjectType": "Task",
                  "references": [ { "field": "WhatId", "soups": ["AccountSoup", "OpportunitySoup"] },
                                  { "field": "WhoId", "soups": ["ContactSoup"] } ] } ] },
            "options": { "mergeMode": "OVERWRITE" } } ]
        """

    @Test func theSPECsGraphValidatesAndSyncsEveryLevel() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: #"[ { "id": "up", "type": "syncUp", "sync": "MigrationUp" } ]"#, soups: Self.soups)
        #expect(pipeline.soups.first { $0.name == "TaskSoup" }?.index(forPath: "WhatId") != nil, "the reference fields are indexed by the product")
        try await bench.put([SyncHarness.local("Account", "local_parent", ["Name": "Parent Co"]),
                             SyncHarness.local("Account", "local_child", ["Name": "Child Co", "ParentId": "local_parent"])], into: "AccountSoup", pipeline)
        try await bench.put([SyncHarness.local("Contact", "local_ann", ["LastName": "Ann", "AccountId": "local_child"])], into: "ContactSoup", pipeline)
        try await bench.put([SyncHarness.local("Case", "local_case", ["Subject": "Broken", "ContactId": "local_ann", "AccountId": "local_child"])],
                            into: "CaseSoup", pipeline)
        try await bench.put([SyncHarness.local("Opportunity", "local_deal", ["Name": "Deal"])], into: "OpportunitySoup", pipeline)
        try await bench.put([SyncHarness.local("Task", "local_call", ["Subject": "Call", "WhatId": "local_child", "WhoId": "local_ann"]),
                             SyncHarness.local("Task", "local_orphan", ["Subject": "Orphan", "WhatId": "local_deal"])], into: "TaskSoup", pipeline)
        let run = try await bench.run(pipeline)
        let stage = run.report.stages[0]
        // The task pointing at an opportunity outside the graph cannot be resolved: it alone fails.
        #expect(run.exitCode == 3 && stage.counts["created"] == 5 && stage.counts["failed"] == 1, "\(stage)")
        let accounts = try await bench.query("SELECT Id, Name, ParentId FROM Account WHERE Name LIKE '% Co'")
        let parent = accounts.first { $0["Name"] == "Parent Co" }?["Id"]
        let child = accounts.first { $0["Name"] == "Child Co" }
        #expect(parent != nil && child?["ParentId"] == parent)
        let ann = try await bench.query("SELECT Id, AccountId FROM Contact WHERE LastName = 'Ann'").first
        #expect(ann?["AccountId"] == child?["Id"])
        let theCase = try await bench.query("SELECT ContactId, AccountId FROM Case WHERE Subject = 'Broken'").first
        #expect(theCase?["ContactId"] == ann?["Id"] && theCase?["AccountId"] == child?["Id"])
        let call = try await bench.query("SELECT WhatId, WhoId FROM Task WHERE Subject = 'Call'").first
        #expect(call?["WhatId"] == child?["Id"] && call?["WhoId"] == ann?["Id"])
        let orphan = try await bench.entries("TaskSoup", pipeline).first { $0["Subject"] == "Orphan" }
        #expect(orphan?.lastErrorCode == "UNRESOLVED_REFERENCE", "\(orphan ?? [:])")
    }
}
