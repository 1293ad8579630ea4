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

    /// Task.WhatId points at an account or an opportunity: the local id says which soup holds it.
    @Test func aPolymorphicLookupResolvesIntoWhicheverSoupHoldsItsTarget() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "graph", "syncType": "syncUp", "soupName": "Accounts",
                "target": { "type": "graph", "objects": [
                  { "soupName": "Tasks", "sobjectType": "Task", "createFieldlist": ["Subject", "WhatId", "WhoId"],
                    "references": [ { "field": "WhatId", "soups": ["Accounts", "Opportunities"] }, { "field": "WhoId", "soup": "Contacts" } ] },
                  { "soupName": "Opportunities", "sobjectType": "Opportunity", "createFieldlist": ["Name", "StageName", "CloseDate", "AccountId"],
                    "references": [ { "field": "AccountId", "soup": "Accounts" } ] },
                  { "soupName": "Contacts", "sobjectType": "Contact", "createFieldlist": ["LastName", "AccountId"],
                    "references": [ { "field": "AccountId", "soup": "Accounts" } ] },
                  { "soupName": "Accounts", "sobjectType": "Account", "createFieldlist": ["Name"] } ] } } ]
            """, stages: Self.stages)
        try await bench.put([SyncHarness.local("Account", "local_a", ["Name": "P account"])], into: "Accounts", pipeline)
        try await bench.put([SyncHarness.local("Opportunity", "local_o", ["Name": "P deal", "StageName": "Prospecting",
                                                                          "CloseDate": "2027-01-31", "AccountId": "local_a"])],
                            into: "Opportunities", pipeline)
        try await bench.put([SyncHarness.local("Contact", "local_c", ["LastName": "P contact", "AccountId": "local_a"])], into: "Contacts", pipeline)
        try await bench.put([
            SyncHarness.local("Task", "local_t1", ["Subject": "P call the account", "WhatId": "local_a", "WhoId": "local_c"]),
            SyncHarness.local("Task", "local_t2", ["Subject": "P follow the deal", "WhatId": "local_o"]),
        ], into: "Tasks", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["created"] == 5)
        let account = try await bench.query("SELECT Id FROM Account WHERE Name = 'P account'").first?["Id"]
        let deal = try await bench.query("SELECT Id FROM Opportunity WHERE Name = 'P deal'").first?["Id"]
        let contact = try await bench.query("SELECT Id FROM Contact WHERE LastName = 'P contact'").first?["Id"]
        let tasks = Dictionary(try await bench.query("SELECT Subject, WhatId, WhoId FROM Task WHERE Subject LIKE 'P %'").map {
            ($0["Subject"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        #expect(tasks["P call the account"]?["WhatId"] == account && account != nil)
        #expect(tasks["P call the account"]?["WhoId"] == contact && contact != nil)
        #expect(tasks["P follow the deal"]?["WhatId"] == deal && deal != nil)
    }

    /// A dry run plans every level (a record whose parent is planned is planned too) and sends
    /// nothing; a reference no soup holds is a reject in the plan, not a length error.
    @Test func aDryRunPlansEveryLevel() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages)
        try await bench.put([
            SyncHarness.local("Account", "local_dry_child", ["Name": "R child", "ParentId": "local_dry_parent"]),
            SyncHarness.local("Account", "local_dry_parent", ["Name": "R parent"]),
        ], into: "Accounts", pipeline)
        try await bench.put([
            SyncHarness.local("Contact", "local_dry_k", ["LastName": "R contact", "AccountId": "local_dry_child"]),
            SyncHarness.local("Contact", "local_dry_lost", ["LastName": "R lost", "AccountId": "local_not_anywhere_at_all"]),
        ], into: "Contacts", pipeline)
        try await bench.put([SyncHarness.local("Case", "local_dry_s", ["Subject": "R case", "ContactId": "local_dry_k"])], into: "Cases", pipeline)
        let before = await bench.stats()["requests"]?["writes"]

        let dry = try await bench.run(pipeline, dryRun: true)
        let counts = dry.report.stages[0].counts
        #expect(counts["created"] == 4, "two account levels, the contact under the child, the case: \(counts)")
        #expect(counts["rejected"] == 1, "the contact whose account no soup holds")
        let after = await bench.stats()["requests"]?["writes"]
        #expect(before != nil && before == after, "a dry run writes nothing")
        let plan = try String(contentsOfFile: (dry.report.reportDir as NSString).appendingPathComponent("Contact-plan.csv"), encoding: .utf8)
        #expect(plan.contains("which no soup of this sync holds"))
        #expect(!plan.contains("STRING_TOO_LONG"))
    }

    /// cleanGhosts spares a record a dirty entry of another soup refers to (the pipeline's graph
    /// sync declares the reference), and removes the other ghosts.
    @Test func cleanGhostsSparesARecordADirtyEntryRefersTo() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let down = #"{ "syncName": "down", "syncType": "syncDown", "soupName": "Accounts", "target": { "type": "soql", "query": "SELECT Id, Name FROM Account WHERE Name LIKE 'H %'" } }"#
        let syncs = Self.sync.replacingOccurrences(of: "} } ]", with: "} }, \(down) ]")
        let referenced = try await bench.client.create("Account", ["Name": "H referenced"])
        let unreferenced = try await bench.client.create("Account", ["Name": "H gone"])
        let syncDown = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "down" } ]"#)
        #expect(try await bench.run(syncDown).exitCode == 0)
        try await bench.put([SyncHarness.local("Contact", "local_h", ["LastName": "H pending", "AccountId": .string(referenced)])],
                            into: "Contacts", syncDown)
        try await bench.client.delete("Account", id: referenced)
        try await bench.client.delete("Account", id: unreferenced)
        let clean = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "ghosts", "type": "cleanGhosts", "sync": "down" } ]"#)
        let outcome = try await bench.run(clean)
        #expect(outcome.report.stages[0].counts["ghostsRemoved"] == 1)
        let names = try await bench.entries("Accounts", clean).compactMap { $0["Name"]?.stringValue }
        #expect(names.contains("H referenced") && !names.contains("H gone"))
    }

    /// Case.AccountId is `restrictedDelete` in the sample seed: an account with a case cannot be
    /// deleted first. The graph deletes the case, then the account.
    @Test func deletesInReverseOrderPassARestrictedDelete() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: Self.stages)
        let account = try await bench.serverRecord("Account", ["Name": "RD account"])
        let kase = try await bench.serverRecord("Case", ["Subject": "RD case", "AccountId": account["Id"]!])
        let refused = try? await bench.client.delete("Account", id: account["Id"]!.stringValue!)
        #expect(refused == nil, "the org refuses to delete an account that has a case")
        try await bench.put([SyncHarness.flagged(account, SyncField.locallyDeleted)], into: "Accounts", pipeline)
        try await bench.put([SyncHarness.flagged(kase, SyncField.locallyDeleted)], into: "Cases", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["deleted"] == 2)
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'RD account'").isEmpty)
    }

    /// LEAVE_IF_CHANGED on the middle level: a contact changed on the server is left alone (a
    /// conflict); its account above and its new case below still go.
    @Test func leaveIfChangedOnAMiddleLevel() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync.replacingOccurrences(of: "OVERWRITE", with: "LEAVE_IF_CHANGED"), stages: Self.stages)
        let account = try await bench.serverRecord("Account", ["Name": "LC account"])
        let contact = try await bench.serverRecord("Contact", ["LastName": "LC contact", "AccountId": account["Id"]!])
        bench.advanceClock()
        try await bench.client.update("Contact", id: contact["Id"]!.stringValue!, ["LastName": "LC server edit"])
        try await bench.put([SyncHarness.flagged(account, SyncField.locallyUpdated, ["Name": "LC account renamed"])], into: "Accounts", pipeline)
        try await bench.put([SyncHarness.flagged(contact, SyncField.locallyUpdated, ["LastName": "LC local edit"])], into: "Contacts", pipeline)
        try await bench.put([SyncHarness.local("Case", "local_lc", ["Subject": "LC case", "ContactId": contact["Id"]!])], into: "Cases", pipeline)
        let outcome = try await bench.run(pipeline)
        let counts = outcome.report.stages[0].counts
        #expect(counts["conflicts"] == 1 && counts["updated"] == 1 && counts["created"] == 1, "\(counts)")
        #expect(try await bench.query("SELECT LastName FROM Contact WHERE Id = '\(contact["Id"]!.stringValue!)'").first?["LastName"] == "LC server edit")
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(account["Id"]!.stringValue!)'").first?["Name"] == "LC account renamed")
        #expect(try await bench.query("SELECT ContactId FROM Case WHERE Subject = 'LC case'").first?["ContactId"] == contact["Id"])
    }

    /// A true cycle between two custom objects: an order's primary line is one of its own lines
    /// (master-detail to the order). The order is created without Primary_Line__c, the line under
    /// it, then the order is updated to point at the line — counted as one update.
    @Test func aTrueCycleIsBrokenByACreateThenAnUpdate() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "graph", "syncType": "syncUp", "soupName": "Orders",
                "target": { "type": "graph", "objects": [
                  { "soupName": "Orders", "sobjectType": "Order__c", "createFieldlist": ["Name", "Primary_Line__c"],
                    "references": [ { "field": "Primary_Line__c", "soup": "Lines" } ] },
                  { "soupName": "Lines", "sobjectType": "Order_Line__c", "createFieldlist": ["Product__c", "Order__c"],
                    "references": [ { "field": "Order__c", "soup": "Orders", "relationshipType": "MASTER_DETAIL" } ] } ] } } ]
            """, stages: Self.stages)
        try await bench.put([SyncHarness.local("Order__c", "local_o", ["Name": "Cycle order", "Primary_Line__c": "local_l1"])],
                            into: "Orders", pipeline)
        try await bench.put([
            SyncHarness.local("Order_Line__c", "local_l1", ["Product__c": "Cycle widget", "Order__c": "local_o"]),
            SyncHarness.local("Order_Line__c", "local_l2", ["Product__c": "Cycle gadget", "Order__c": "local_o"]),
        ], into: "Lines", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["created"] == 3)
        #expect(outcome.report.stages[0].counts["updated"] == 1, "the cycle's reference, set after the line exists")
        let order = try #require(try await bench.query("SELECT Id, Primary_Line__c FROM Order__c WHERE Name = 'Cycle order'").first)
        let lines = Dictionary(try await bench.query("SELECT Id, Product__c, Order__c FROM Order_Line__c WHERE Product__c LIKE 'Cycle %'").map {
            ($0["Product__c"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        #expect(order["Primary_Line__c"] == lines["Cycle widget"]?["Id"] && order["Primary_Line__c"] != nil)
        #expect(lines.values.allSatisfy { $0["Order__c"] == order["Id"] } && lines.count == 2)
        for soup in ["Orders", "Lines"] {
            let entries = try await bench.entries(soup, pipeline)
            #expect(entries.allSatisfy { !$0.isDirty }, "\(soup) clean")
            let ids = entries.flatMap { entry in ["Id", "Primary_Line__c", "Order__c"].compactMap { entry[$0]?.stringValue } }
            #expect(!ids.contains(where: SyncField.isLocalId))
        }
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

/// The graph target under every fault profile of the soak: families of a parent account, a child
/// account (self-lookup), a contact under the child and a case under the contact, run under the
/// faults and then again until it succeeds; the org and the soups must then agree exactly.
@Suite struct GraphSyncUpSoakTests {
    static let families = ProcessInfo.processInfo.environment["SOAK_TREES"].flatMap(Int.init).map { max(8, $0 / 4) } ?? 8

    @Test(arguments: SyncUpSoakTests.selected)
    func faultsEndExact(profile: SyncUpSoakTests.Profile) async throws {
        let bench = try await SyncHarness(requestDeadlineSeconds: SyncUpSoakTests.deadlineSeconds)
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: GraphSyncUpTests.sync, stages: GraphSyncUpTests.stages,
                                          org: profile.timeouts ? SyncUpSoakTests.timeoutSettings : "",
                                          refreshAuth: profile.refreshAuth)
        let count = Self.families
        // Children first in each soup, so their parents are found later.
        try await bench.put((0..<count).flatMap { index in [
            SyncHarness.local("Account", "local_c\(index)", ["Name": .string("GC\(index)"), "ParentId": .string("local_p\(index)")]),
            SyncHarness.local("Account", "local_p\(index)", ["Name": .string("GP\(index)")]),
        ] }, into: "Accounts", pipeline)
        try await bench.put((0..<count).map { index in
            SyncHarness.local("Contact", "local_k\(index)", ["LastName": .string("GK\(index)"), "AccountId": .string("local_c\(index)")])
        }, into: "Contacts", pipeline)
        try await bench.put((0..<count).map { index in
            SyncHarness.local("Case", "local_s\(index)", ["Subject": .string("GS\(index)"), "ContactId": .string("local_k\(index)"),
                                                          "AccountId": .string("local_c\(index)")])
        }, into: "Cases", pipeline)
        try await SyncUpSoakTests.setFaults(of: profile, on: bench)
        var last = try await bench.run(pipeline)
        var created = SyncUpIntegrityTests.created(last)
        if !profile.stops {
            #expect(last.exitCode == 0 || last.exitCode == 3, "\(profile): the first run kept going: \(last.report.stages[0])")
            let counted = ["created", "updated", "failed", "uncertain"].reduce(0) { $0 + (last.report.stages[0].counts[$1] ?? 0) }
            #expect(counted == count * 4, "\(profile): every record counted once: \(last.report.stages[0].counts)")
        }
        try await bench.setFaults([:])
        if profile.timeouts { await bench.letTimePass(seconds: Int(SyncUpSoakTests.settleSeconds.rounded(.up))) }
        for _ in 0..<3 where last.exitCode != 0 {
            last = try await bench.run(pipeline)
            created += SyncUpIntegrityTests.created(last)
        }
        #expect(last.exitCode == 0, "\(profile): \(last.report.stages[0])")
        #expect(created == count * 4, "\(profile): each record counted created once")

        func byName(_ soql: String, _ key: String) async throws -> [String: JSONObject] {
            let records = try await bench.query(soql)
            #expect(Set(records.compactMap { $0[key]?.stringValue }).count == records.count, "\(profile): no duplicate in \(soql)")
            return Dictionary(records.map { ($0[key]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        }
        let accounts = try await byName("SELECT Id, Name, ParentId FROM Account WHERE Name LIKE 'GC%' OR Name LIKE 'GP%'", "Name")
        let contacts = try await byName("SELECT Id, LastName, AccountId FROM Contact WHERE LastName LIKE 'GK%'", "LastName")
        let cases = try await byName("SELECT Id, Subject, ContactId, AccountId FROM Case WHERE Subject LIKE 'GS%'", "Subject")
        #expect(accounts.count == count * 2 && contacts.count == count && cases.count == count, "\(profile): every record once")
        for index in 0..<count {
            let child = accounts["GC\(index)"], parent = accounts["GP\(index)"], contact = contacts["GK\(index)"]
            #expect(child?["ParentId"] == parent?["Id"] && parent?["Id"] != nil, "\(profile): GC\(index) under its parent")
            #expect(contact?["AccountId"] == child?["Id"], "\(profile): GK\(index) under its account")
            #expect(cases["GS\(index)"]?["ContactId"] == contact?["Id"] && cases["GS\(index)"]?["AccountId"] == child?["Id"])
        }
        let orgIds = Set([accounts, contacts, cases].flatMap { $0.values.compactMap { $0["Id"]?.stringValue } })
        for soup in ["Accounts", "Contacts", "Cases"] {
            let entries = try await bench.entries(soup, pipeline)
            #expect(entries.allSatisfy { !$0.isDirty }, "\(profile): \(soup) clean")
            #expect(entries.allSatisfy { orgIds.contains($0["Id"]?.stringValue ?? "") }, "\(profile): \(soup) hold the org's ids")
        }
    }
}
