import Foundation
import JSON
import Soups
import Stages
import Testing

/// The graph's "done when": five objects load from CSV files in one pipeline — a self-lookup whose
/// parents come later in the file, two levels, a record with two parents, a polymorphic lookup —
/// and every reference on the org points at the right record, every entry is clean with a server
/// id, and nothing is sent twice.
@Suite struct GraphLoadTests {
    static let files = [
        "accounts.csv": "Name,ParentName\nShop,Sub East\nSub East,HQ\nSub West,HQ\nHQ,\n",
        "contacts.csv": "LastName,AccountName\nAda,Shop\nBea,HQ\nCy,Sub West\n",
        "opportunities.csv": "Name,StageName,CloseDate,AccountName\nBig deal,Prospecting,2027-03-31,Sub East\n",
        "cases.csv": "Subject,ContactName,AccountName\nBroken till,Ada,Shop\nLate invoice,Bea,HQ\n",
        "tasks.csv": "Subject,WhatName,WhoName\nCall the shop,Shop,Ada\nPrice the deal,Big deal,\n",
    ]

    static let sync = """
        [ { "syncName": "load", "syncType": "syncUp", "soupName": "Accounts",
            "target": { "type": "graph", "objects": [
              { "soupName": "Accounts", "sobjectType": "Account", "createFieldlist": ["Name", "ParentId"],
                "references": [ { "field": "ParentId", "soup": "Accounts" } ] },
              { "soupName": "Contacts", "sobjectType": "Contact", "createFieldlist": ["LastName", "AccountId"],
                "references": [ { "field": "AccountId", "soup": "Accounts" } ] },
              { "soupName": "Opportunities", "sobjectType": "Opportunity", "createFieldlist": ["Name", "StageName", "CloseDate", "AccountId"],
                "references": [ { "field": "AccountId", "soup": "Accounts" } ] },
              { "soupName": "Cases", "sobjectType": "Case", "createFieldlist": ["Subject", "ContactId", "AccountId"],
                "references": [ { "field": "ContactId", "soup": "Contacts" }, { "field": "AccountId", "soup": "Accounts" } ] },
              { "soupName": "Tasks", "sobjectType": "Task", "createFieldlist": ["Subject", "WhatId", "WhoId"],
                "references": [ { "field": "WhatId", "soups": ["Accounts", "Opportunities"] }, { "field": "WhoId", "soup": "Contacts" } ] } ] } } ]
        """

    static let stages = """
        [ { "id": "accounts", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
          { "id": "stage-accounts", "type": "stage", "from": "accounts", "soup": "Accounts", "matchOn": "Name",
            "parent": { "soup": "Accounts", "key": "ParentName", "matchOn": "Name", "idField": "ParentId", "required": false } },
          { "id": "contacts", "type": "extract.csv", "file": "contacts.csv", "sobjectType": "Contact" },
          { "id": "stage-contacts", "type": "stage", "from": "contacts", "after": ["stage-accounts"], "soup": "Contacts", "matchOn": "LastName",
            "parent": { "soup": "Accounts", "key": "AccountName", "matchOn": "Name", "idField": "AccountId" } },
          { "id": "opportunities", "type": "extract.csv", "file": "opportunities.csv", "sobjectType": "Opportunity" },
          { "id": "stage-opportunities", "type": "stage", "from": "opportunities", "after": ["stage-accounts"], "soup": "Opportunities",
            "matchOn": "Name", "parent": { "soup": "Accounts", "key": "AccountName", "matchOn": "Name", "idField": "AccountId" } },
          { "id": "cases", "type": "extract.csv", "file": "cases.csv", "sobjectType": "Case" },
          { "id": "stage-cases", "type": "stage", "from": "cases", "after": ["stage-contacts"], "soup": "Cases", "matchOn": "Subject",
            "parent": [ { "soup": "Contacts", "key": "ContactName", "matchOn": "LastName", "idField": "ContactId" },
                        { "soup": "Accounts", "key": "AccountName", "matchOn": "Name", "idField": "AccountId" } ] },
          { "id": "tasks", "type": "extract.csv", "file": "tasks.csv", "sobjectType": "Task" },
          { "id": "stage-tasks", "type": "stage", "from": "tasks", "after": ["stage-contacts", "stage-opportunities"], "soup": "Tasks",
            "matchOn": "Subject",
            "parent": [ { "soups": ["Accounts", "Opportunities"], "key": "WhatName", "matchOn": "Name", "idField": "WhatId" },
                        { "soup": "Contacts", "key": "WhoName", "matchOn": "LastName", "idField": "WhoId", "required": false } ] },
          { "id": "mark-accounts", "type": "markDirty", "after": ["stage-tasks", "stage-cases"], "soup": "Accounts", "as": "auto" },
          { "id": "mark-contacts", "type": "markDirty", "after": ["stage-tasks", "stage-cases"], "soup": "Contacts", "as": "auto" },
          { "id": "mark-opportunities", "type": "markDirty", "after": ["stage-tasks", "stage-cases"], "soup": "Opportunities", "as": "auto" },
          { "id": "mark-cases", "type": "markDirty", "after": ["stage-tasks", "stage-cases"], "soup": "Cases", "as": "auto" },
          { "id": "mark-tasks", "type": "markDirty", "after": ["stage-tasks", "stage-cases"], "soup": "Tasks", "as": "auto" },
          { "id": "up", "type": "syncUp", "sync": "load",
            "after": ["mark-accounts", "mark-contacts", "mark-opportunities", "mark-cases", "mark-tasks"] } ]
        """

    /// The same load with each `stage` flagging what it writes (`markDirty: true`) instead of
    /// `markDirty` stages after them.
    static let stagesMarkingAsTheyWrite: String = {
        var stages = try! JSONParser.parse(Self.stages).arrayValue!.compactMap(\.objectValue)
        stages.removeAll { $0["type"] == "markDirty" }
        for index in stages.indices where stages[index]["type"] == "stage" { stages[index]["markDirty"] = true }
        stages[stages.count - 1]["after"] = .array(stages.filter { $0["type"] == "stage" }.compactMap { $0["id"] })
        return JSONValue.array(stages.map(JSONValue.object)).jsonString
    }()

    @Test(arguments: [false, true])
    func fiveObjectsLoadFromCSVFilesWithEveryReferenceRight(markedAsStaged: Bool) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        for (name, text) in Self.files {
            try text.write(toFile: (bench.directory as NSString).appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: markedAsStaged ? Self.stagesMarkingAsTheyWrite : Self.stages)
        #expect(pipeline.stages.contains { $0.type == "markDirty" } != markedAsStaged)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages.map { "\($0.id): \($0.status) \($0.counts) \($0.error ?? "")" })")
        let up = try #require(outcome.report.stages.first { $0.id == "up" })
        #expect(up.counts["created"] == 12, "4 accounts, 3 contacts, 1 opportunity, 2 cases, 2 tasks, each once")

        func byName(_ soql: String, _ key: String) async throws -> [String: JSONObject] {
            Dictionary(try await bench.query(soql).map { ($0[key]!.stringValue!, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let accounts = try await byName("SELECT Id, Name, ParentId FROM Account WHERE Name IN ('HQ', 'Sub East', 'Sub West', 'Shop')", "Name")
        let contacts = try await byName("SELECT Id, LastName, AccountId FROM Contact WHERE LastName IN ('Ada', 'Bea', 'Cy')", "LastName")
        let deals = try await byName("SELECT Id, Name, AccountId FROM Opportunity WHERE Name = 'Big deal'", "Name")
        let cases = try await byName("SELECT Subject, ContactId, AccountId FROM Case WHERE Subject IN ('Broken till', 'Late invoice')", "Subject")
        let tasks = try await byName("SELECT Subject, WhatId, WhoId FROM Task", "Subject")
        #expect(accounts.count == 4 && contacts.count == 3 && deals.count == 1 && cases.count == 2 && tasks.count == 2)
        let id = { (records: [String: JSONObject], name: String) in records[name]?["Id"] }
        #expect(accounts["HQ"]?["ParentId"] == .null)
        #expect(accounts["Sub East"]?["ParentId"] == id(accounts, "HQ"))
        #expect(accounts["Sub West"]?["ParentId"] == id(accounts, "HQ"))
        #expect(accounts["Shop"]?["ParentId"] == id(accounts, "Sub East"))
        #expect(contacts["Ada"]?["AccountId"] == id(accounts, "Shop"))
        #expect(contacts["Cy"]?["AccountId"] == id(accounts, "Sub West"))
        #expect(deals["Big deal"]?["AccountId"] == id(accounts, "Sub East"))
        #expect(cases["Broken till"]?["ContactId"] == id(contacts, "Ada") && cases["Broken till"]?["AccountId"] == id(accounts, "Shop"))
        #expect(cases["Late invoice"]?["ContactId"] == id(contacts, "Bea") && cases["Late invoice"]?["AccountId"] == id(accounts, "HQ"))
        #expect(tasks["Call the shop"]?["WhatId"] == id(accounts, "Shop") && tasks["Call the shop"]?["WhoId"] == id(contacts, "Ada"))
        #expect(tasks["Price the deal"]?["WhatId"] == id(deals, "Big deal") && tasks["Price the deal"]?["WhoId"] == .null)

        for soup in ["Accounts", "Contacts", "Opportunities", "Cases", "Tasks"] {
            let entries = try await bench.entries(soup, pipeline)
            #expect(entries.allSatisfy { !$0.isDirty }, "\(soup) clean")
            let ids = entries.flatMap { entry in ["Id", "ParentId", "AccountId", "ContactId", "WhatId", "WhoId"].compactMap { entry[$0]?.stringValue } }
            #expect(!ids.contains(where: SyncField.isLocalId), "\(soup): no local id left")
        }
        // The same pipeline again: the files match what is staged, nothing is sent.
        let again = try await bench.run(pipeline)
        #expect(again.exitCode == 0)
        #expect(again.report.stages.first { $0.id == "up" }?.counts["created"] ?? 0 == 0)
    }

    /// A self-lookup is resolved after the whole input: a parent later in the file is found, a
    /// parent nowhere in the soup is rejected with its line (the record is staged without the link).
    @Test func aSelfLookupFindsParentsLaterInTheFileAndRejectsMissingOnes() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        try "Name,ParentName\nKid,Mom\nOrphan,Nobody\nMom,\n".write(
            toFile: (bench.directory as NSString).appendingPathComponent("accounts.csv"), atomically: true, encoding: .utf8)
        let pipeline = try bench.pipeline(syncs: "[]", stages: """
            [ { "id": "accounts", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
              { "id": "stage", "type": "stage", "from": "accounts", "soup": "Accounts", "matchOn": "Name",
                "parent": { "soup": "Accounts", "key": "ParentName", "matchOn": "Name", "idField": "ParentId", "required": false } } ]
            """)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.report.stages[1].counts["rejected"] == 1)
        let entries = Dictionary(try await bench.entries("Accounts", pipeline).map { ($0["Name"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        #expect(entries["Kid"]?["ParentId"] == entries["Mom"]?["Id"] && entries["Mom"]?["Id"] != nil)
        #expect(entries["Orphan"] != nil && entries["Orphan"]?["ParentId"] == nil)
        #expect(entries.values.allSatisfy { $0["ParentName"] == nil }, "the key column is not stored")
        let rejects = try String(contentsOfFile: outcome.report.reportDir + "/rejects/stage.csv", encoding: .utf8)
        #expect(rejects.contains("missing parent: ParentName = Nobody (the record is staged without ParentId)"))
    }
}
