import Connectors
import Foundation
import JSON
import Soups
import Stages
import Testing

/// Parent-children sync up: every combination of local {none, update, delete} × remote {none,
/// update, delete} for a parent and its child — 81 trees synced in one run — for both merge modes
/// and both relationship types, checked record by record in the soups and in the org against the
/// rules of SPEC §4.
@Suite struct ParentChildrenSyncUpTests {
    enum Change: CaseIterable { case none, update, delete }

    struct Scenario {
        var localParent: Change, remoteParent: Change, localChild: Change, remoteChild: Change
    }

    static let scenarios: [Scenario] = Change.allCases.flatMap { lp in Change.allCases.flatMap { rp in
        Change.allCases.flatMap { lc in Change.allCases.map { rc in Scenario(localParent: lp, remoteParent: rp, localChild: lc, remoteChild: rc) } }
    } }

    /// Master-detail: Order__c → Order_Line__c; lookup: Account → Order__c.
    struct Shape {
        var masterDetail: Bool
        var parentType: String { masterDetail ? "Order__c" : "Account" }
        var parentSoup: String { masterDetail ? "Orders" : "Accounts" }
        var childType: String { masterDetail ? "Order_Line__c" : "Order__c" }
        var childSoup: String { masterDetail ? "Lines" : "Orders" }
        var childField: String { masterDetail ? "Product__c" : "Name" }
        var parentField: String { masterDetail ? "Order__c" : "Account__c" }
        var relationship: String { masterDetail ? "Lines__r" : "Orders__r" }
    }

    @Test(arguments: [(true, "OVERWRITE"), (true, "LEAVE_IF_CHANGED"), (false, "OVERWRITE"), (false, "LEAVE_IF_CHANGED")])
    func matrix(masterDetail: Bool, mergeMode: String) async throws {
        let shape = Shape(masterDetail: masterDetail)
        let overwrite = mergeMode == "OVERWRITE"
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "trees", "syncType": "syncUp", "soupName": "\(shape.parentSoup)",
                "target": { "type": "parent_children", "relationshipType": "\(masterDetail ? "MASTER_DETAIL" : "LOOKUP")",
                  "parent": { "sobjectType": "\(shape.parentType)", "soupName": "\(shape.parentSoup)" },
                  "children": { "sobjectType": "\(shape.childType)", "sobjectTypePlural": "\(shape.relationship)", "soupName": "\(shape.childSoup)",
                                "parentIdFieldName": "\(shape.parentField)" },
                  "createFieldlist": ["Name"], "updateFieldlist": ["Name"],
                  "childrenCreateFieldlist": ["\(shape.childField)", "\(shape.parentField)"], "childrenUpdateFieldlist": ["\(shape.childField)", "\(shape.parentField)"] },
                "options": { "mergeMode": "\(mergeMode)" } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "trees" } ]"#)

        // Server records, as a sync down would have left them locally.
        var parents: [JSONObject] = []
        var children: [JSONObject] = []
        for (index, _) in Self.scenarios.enumerated() {
            let parent = try await bench.serverRecord(shape.parentType, ["Name": .string("P\(index)")])
            parents.append(parent)
            var childFields: JSONObject = [shape.childField: .string("C\(index)"), shape.parentField: parent["Id"]!]
            if masterDetail { childFields["Line_Key__c"] = .string("K\(index)") }
            children.append(try await bench.serverRecord(shape.childType, childFields))
        }
        bench.advanceClock()
        for (index, scenario) in Self.scenarios.enumerated() {
            let childId = children[index]["Id"]!.stringValue!, parentId = parents[index]["Id"]!.stringValue!
            switch scenario.remoteChild {
            case .update: try await bench.client.update(shape.childType, id: childId, [shape.childField: .string("C\(index) server")])
            case .delete: try await bench.client.delete(shape.childType, id: childId)
            case .none: break
            }
            switch scenario.remoteParent {
            case .update: try await bench.client.update(shape.parentType, id: parentId, ["Name": .string("P\(index) server")])
            case .delete: try await bench.client.delete(shape.parentType, id: parentId)
            case .none: break
            }
        }
        func local(_ entry: JSONObject, _ change: Change, _ field: String, _ value: String) -> JSONObject {
            switch change {
            case .none: return entry
            case .update: return SyncHarness.flagged(entry, SyncField.locallyUpdated, [field: .string(value)])
            case .delete: return SyncHarness.flagged(entry, SyncField.locallyDeleted)
            }
        }
        try await bench.put(zip(parents, Self.scenarios).enumerated().map { index, pair in
            local(pair.0, pair.1.localParent, "Name", "P\(index) local")
        }, into: shape.parentSoup, pipeline)
        try await bench.put(zip(children, Self.scenarios).enumerated().map { index, pair in
            local(pair.0, pair.1.localChild, shape.childField, "C\(index) local")
        }, into: shape.childSoup, pipeline)

        let outcome = try await bench.run(pipeline)
        #expect(outcome.report.stages[0].status != .failed, "\(outcome.report.stages[0].error ?? "")")

        let localParents = Dictionary(try await bench.entries(shape.parentSoup, pipeline).map { ($0["Name"]?.stringValue?.split(separator: " ").first.map(String.init) ?? "", $0) },
                                      uniquingKeysWith: { $1 })
        let localChildren = try await bench.entries(shape.childSoup, pipeline)
        let serverParents = Dictionary(try await bench.query("SELECT Id, Name FROM \(shape.parentType)").map { ($0["Id"]!.stringValue!, $0) }, uniquingKeysWith: { $1 })
        let serverChildren = Dictionary(try await bench.query("SELECT Id, \(shape.childField), \(shape.parentField) FROM \(shape.childType)").map { ($0["Id"]!.stringValue!, $0) },
                                        uniquingKeysWith: { $1 })
        var conflicts = 0
        for (index, s) in Self.scenarios.enumerated() {
            let label = "tree \(index) \(s) \(mergeMode) \(masterDetail ? "master-detail" : "lookup")"
            let oldParentId = parents[index]["Id"]!.stringValue!, oldChildId = children[index]["Id"]!.stringValue!
            let parent = localParents["P\(index)"]
            let child = localChildren.first { $0[shape.childField]?.stringValue?.hasPrefix("C\(index)") == true && ($0[shape.childField]?.stringValue == "C\(index)" || $0[shape.childField]?.stringValue == "C\(index) local") }
            let dirty = s.localParent != .none || s.localChild != .none
            let remoteParentGone = s.remoteParent == .delete
            // A master-detail child goes with its parent; a lookup child leaves it (its parent field
            // cleared), so either way it is no longer among the parent's children in the org.
            let remoteChildGone = s.remoteChild == .delete || s.remoteParent == .delete
            let remoteChildChanged = !remoteChildGone && s.remoteChild == .update
            let parentGone = s.localParent == .delete && masterDetail
            let conflict = !overwrite && dirty && ((remoteParentGone && s.localParent != .delete) || s.remoteParent == .update
                || (remoteChildGone && !(s.localChild == .delete || parentGone)) || remoteChildChanged)
            if conflict {
                conflicts += (s.localParent != .none ? 1 : 0) + (s.localChild != .none && !parentGone ? 1 : 0) + (parentGone && s.localChild != .none ? 1 : 0)
                #expect(parent?.isDirty == (s.localParent != .none), "\(label): parent left as it was")
                #expect(child?.isDirty == (s.localChild != .none), "\(label): child left as it was")
                if s.localParent != .none { #expect(parent?.lastErrorCode == "CONFLICT", "\(label)") }
                #expect(parent?["Id"]?.stringValue == oldParentId && child?["Id"]?.stringValue == oldChildId, "\(label)")
                if !remoteParentGone {
                    #expect(serverParents[oldParentId]?["Name"]?.stringValue == (s.remoteParent == .update ? "P\(index) server" : "P\(index)"), "\(label): server parent untouched")
                }
                continue
            }
            // Parent.
            let parentRecreated = overwrite && remoteParentGone && s.localParent != .delete
                && (s.localParent == .update || s.localChild == .update)
            switch s.localParent {
            case .delete:
                #expect(parent == nil, "\(label): parent removed locally")
                #expect(serverParents[oldParentId] == nil, "\(label): parent deleted in the org")
            case .update, .none:
                let parentEntry = try #require(parent, "\(label): parent kept")
                #expect(!parentEntry.isDirty && parentEntry[SyncField.lastError] == .null, "\(label): parent clean")
                let id = parentEntry["Id"]?.stringValue ?? ""
                #expect((id != oldParentId) == parentRecreated, "\(label): parent re-created only when deleted on the server and needed")
                if s.localParent == .update {
                    #expect(serverParents[id]?["Name"]?.stringValue == "P\(index) local", "\(label): local parent values in the org")
                } else if !remoteParentGone || parentRecreated {
                    #expect(serverParents[id] != nil, "\(label): parent exists in the org")
                }
            }
            // Child.
            if parentGone || s.localChild == .delete {
                #expect(child == nil, "\(label): child removed locally")
                #expect(serverChildren[oldChildId] == nil, "\(label): child gone from the org")
                continue
            }
            let childEntry = try #require(child, "\(label): child kept")
            #expect(!childEntry.isDirty && childEntry[SyncField.lastError] == .null, "\(label): child clean, \(childEntry[SyncField.lastError] ?? .null)")
            let childId = childEntry["Id"]?.stringValue ?? ""
            let childSent = s.localChild == .update || parentRecreated
            let childRecreated = overwrite && childSent && (s.remoteChild == .delete || (masterDetail && remoteParentGone))
            #expect((childId != oldChildId) == childRecreated, "\(label): child re-created only when deleted on the server and sent")
            let parentField = childEntry[shape.parentField]?.stringValue
            if s.localParent == .delete {
                #expect(parentField == nil, "\(label): a lookup child of a deleted parent loses its parent locally")
            } else if childSent {
                #expect(parentField == parent?["Id"]?.stringValue, "\(label): child points at its parent's current id")
                #expect(serverChildren[childId]?[shape.parentField]?.stringValue == parentField, "\(label): and so does the org")
            }
            if s.localChild == .update {
                #expect(serverChildren[childId]?[shape.childField]?.stringValue == "C\(index) local", "\(label): local child values in the org")
            }
        }
        if !overwrite { #expect(outcome.report.stages[0].counts["conflicts"] == conflicts) }
        #expect(outcome.report.stages[0].counts["failed"] == 0)
    }

    /// A parent created and deleted locally never reaches the org; its lookup child outlives it,
    /// created without the link (its `local_` id never sent), under every transport.
    @Test(arguments: ["rest", "collections", "composite", "graph"])
    func aLookupChildOfADiscardedParentIsCreatedUnlinked(strategy: String) async throws {
        typealias H = SyncHarness
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: """
            [ { "syncName": "trees", "syncType": "syncUp", "soupName": "Accounts",
                "target": { "type": "parent_children", "relationshipType": "LOOKUP",
                  "parent": { "sobjectType": "Account", "soupName": "Accounts" },
                  "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
                  "createFieldlist": ["Name"], "updateFieldlist": ["Name"], "childrenCreateFieldlist": ["LastName", "AccountId"],
                  "childrenUpdateFieldlist": ["LastName", "AccountId"] } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "trees", "strategy": "\#(strategy)" } ]"#)
        try await bench.put([H.flagged(H.local("Account", "local_p1", ["Name": "Gone"]), SyncField.locallyDeleted)], into: "Accounts", pipeline)
        try await bench.put([H.local("Contact", "local_c1", ["LastName": "Orphan", "AccountId": "local_p1"])], into: "Contacts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(strategy): \(outcome.report.stages[0])")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Gone'").isEmpty)
        let server = try await bench.query("SELECT Id, AccountId FROM Contact WHERE LastName = 'Orphan'")
        #expect(server.count == 1 && server.first?["AccountId"] == .null, "\(strategy): \(server)")
        let local = try await bench.entries("Contacts", pipeline)
        #expect(local.count == 1 && local.first.map { !$0.isDirty && $0["AccountId"] == .null } == true, "\(strategy): \(local)")
        #expect(try await bench.entries("Accounts", pipeline).isEmpty)
    }
}

/// The same trees through every transport: links by reference or by returned id, a tree of more
/// than 25 writes split correctly, Graph's all-or-nothing trees, the API budget guard.
@Suite struct SyncUpStrategyTests {
    func pipeline(_ bench: SyncHarness, strategy: String, mergeMode: String = "OVERWRITE", extra: String = "") throws -> PipelineDefinition {
        try bench.pipeline(syncs: """
            [ { "syncName": "trees", "syncType": "syncUp", "soupName": "Accounts",
                "target": { "type": "parent_children", "relationshipType": "MASTER_DETAIL",
                  "parent": { "sobjectType": "Account", "soupName": "Accounts" },
                  "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
                  "createFieldlist": ["Name"], "updateFieldlist": ["Name"], "childrenCreateFieldlist": ["LastName", "AccountId"],
                  "childrenUpdateFieldlist": ["LastName", "AccountId"] },
                "options": { "mergeMode": "\(mergeMode)" } } ]
            """, stages: #"[ { "id": "up", "type": "syncUp", "sync": "trees", "strategy": "\#(strategy)"\#(extra) } ]"#)
    }

    @Test(arguments: ["auto", "collections", "composite", "graph", "perTree"])
    func everyTransportLinksChildrenToNewParents(strategy: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try pipeline(bench, strategy: strategy)
        let existing = try await bench.serverRecord("Account", ["Name": "Existing"])
        typealias H = SyncHarness
        try await bench.put([
            H.local("Account", "local_big", ["Name": "Big"]), H.local("Account", "local_small", ["Name": "Small"]),
            H.flagged(existing, SyncField.locallyUpdated, ["Name": "Existing renamed"]),
        ], into: "Accounts", pipeline)
        try await bench.put((0..<30).map { H.local("Contact", "local_b\($0)", ["LastName": .string("Big \($0)"), "AccountId": "local_big"]) }
            + [H.local("Contact", "local_s0", ["LastName": "Small 0", "AccountId": "local_small"]),
               H.local("Contact", "local_e0", ["LastName": "Existing 0", "AccountId": existing["Id"]!])], into: "Contacts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0].error ?? "") \(outcome.report.stages[0].counts)")
        #expect(outcome.report.stages[0].byObject["Account"] == ["created": 2, "updated": 1])
        #expect(outcome.report.stages[0].byObject["Contact"]?["created"] == 32)
        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        #expect(accounts.allSatisfy { !$0.isDirty } && contacts.allSatisfy { !$0.isDirty })
        for (name, count) in [("Big", 30), ("Small", 1), ("Existing renamed", 1)] {
            let id = try #require(accounts.first { $0["Name"]?.stringValue == name }?["Id"]?.stringValue)
            #expect(try await bench.query("SELECT Id FROM Contact WHERE AccountId = '\(id)'").count == count, "\(strategy): \(name)'s children in the org")
            #expect(contacts.filter { $0["AccountId"]?.stringValue == id }.count == count, "\(strategy): \(name)'s children locally")
        }
        if strategy == "perTree" { #expect(outcome.report.api.byKind["composite"] == 4, "one request per tree; the big tree in two") }
        if strategy == "graph" { #expect(outcome.report.api.byKind["graph"] == 1) }
        if strategy == "collections" {
            #expect(outcome.report.api.byKind["composite"] == 1 && outcome.report.api.byKind["collections"] == nil,
                    "every tree in one Composite of Collections calls: \(outcome.report.api.byKind)")
        }
    }

    /// A page filling five requests is sent and saved in parts side by side (the org works on
    /// each while the client saves the one before): each record written once, children linked,
    /// the LEAVE_IF_CHANGED check made once for the page still holding in the last part.
    @Test func aPageFillingFiveRequestsIsSentAndSavedInParts() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try pipeline(bench, strategy: "auto", mergeMode: "LEAVE_IF_CHANGED")
        typealias H = SyncHarness
        // 490 new trees of 1 + 5: 120 fill each of the first four requests (four Collections
        // calls and the new parents' read; new children are not read back); the rest, and two
        // updates of records the org holds (one of them changed there since), go in the fifth.
        let trees = 490
        try await bench.put((0..<trees).map { H.local("Account", "local_a\($0)", ["Name": .string("New \($0)")]) }, into: "Accounts", pipeline)
        let changed = try await bench.serverRecord("Account", ["Name": "Changed on the server"])
        let kept = try await bench.serverRecord("Account", ["Name": "Kept"])
        bench.advanceClock()
        try await bench.client.update("Account", id: changed["Id"]!.stringValue!, ["Name": "Changed there"])
        try await bench.put([H.flagged(changed, SyncField.locallyUpdated, ["Name": "Changed here"]),
                             H.flagged(kept, SyncField.locallyUpdated, ["Name": "Kept renamed"])], into: "Accounts", pipeline)
        try await bench.put((0..<trees).flatMap { tree in
            (0..<5).map { H.local("Contact", "local_c\(tree)_\($0)", ["LastName": .string("Contact \(tree)-\($0)"), "AccountId": .string("local_a\(tree)")]) }
        }, into: "Contacts", pipeline)

        let outcome = try await bench.run(pipeline)
        let stage = outcome.report.stages[0]
        #expect(stage.byObject["Account"] == ["created": trees, "updated": 1, "conflicts": 1], "\(stage.counts)")
        #expect(stage.byObject["Contact"]?["created"] == trees * 5)
        #expect(stage.counts["conflicts"] == 1 && stage.counts["failed"] == 0 && stage.counts["uncertain"] == 0, "\(stage.counts)")
        // Five write requests, as for the page whole, and one conflict check.
        #expect(outcome.report.api.byKind == ["composite": 5, "query": 1], "5 writes, the check: \(outcome.report.api.byKind)")

        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        let conflicted = try #require(accounts.first { $0["Id"] == changed["Id"] })
        #expect(conflicted.isDirty && conflicted.lastErrorCode == "CONFLICT" && conflicted["Name"] == "Changed here")
        #expect(accounts.filter { $0 != conflicted }.allSatisfy { !$0.isDirty && !SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") })
        #expect(contacts.allSatisfy { !$0.isDirty && !SyncField.isLocalId($0["Id"]?.stringValue ?? "local_") })
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(changed["Id"]!.stringValue!)'").first?["Name"] == "Changed there")
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(kept["Id"]!.stringValue!)'").first?["Name"] == "Kept renamed")
        // Each record in the org once, each child under its own parent.
        let serverAccounts = try await bench.query("SELECT Id, Name FROM Account WHERE Name LIKE 'New %'")
        #expect(serverAccounts.count == trees && Set(serverAccounts.map { $0["Name"] }).count == trees)
        let names = Dictionary(uniqueKeysWithValues: serverAccounts.map { ($0["Id"]!.stringValue!, $0["Name"]!.stringValue!) })
        let serverContacts = try await bench.query("SELECT LastName, AccountId FROM Contact WHERE LastName LIKE 'Contact %'")
        #expect(serverContacts.count == trees * 5 && Set(serverContacts.map { $0["LastName"] }).count == trees * 5)
        #expect(serverContacts.allSatisfy { contact in
            let tree = contact["LastName"]!.stringValue!.dropFirst("Contact ".count).split(separator: "-")[0]
            return names[contact["AccountId"]?.stringValue ?? ""] == "New \(tree)"
        })
        let store = try SoupStore.openForReading(path: pipeline.store)
        defer { try? store.close() }
        #expect(try await store.journal.entries(of: "trees").isEmpty, "every write settled")
    }

    /// Under LEAVE_IF_CHANGED the org's new modification dates of updated records, and of new
    /// parents whose children are written after them (the org may change a parent on their
    /// account), are read back by the request that wrote them (retrieves whose ids refer to the
    /// writes' results): no request of their own. New children need no read: they are held as
    /// created, and the next check compares the org's LastModifiedDate with its CreatedDate. A
    /// request whose read cannot be resolved (an update in it failed) has its dates read after.
    /// Either way the next sync up of the same records finds no conflict with our own writes.
    @Test func newDatesAreReadBackByTheRequestThatWrites() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try pipeline(bench, strategy: "auto", mergeMode: "LEAVE_IF_CHANGED")
        typealias H = SyncHarness
        let existing = try await bench.serverRecord("Account", ["Name": "Existing"])
        bench.advanceClock()
        try await bench.put((0..<3).map { H.local("Account", "local_a\($0)", ["Name": .string("New \($0)")]) }
                            + [H.flagged(existing, SyncField.locallyUpdated, ["Name": "Existing renamed"])], into: "Accounts", pipeline)
        try await bench.put((0..<3).flatMap { tree in
            (0..<2).map { H.local("Contact", "local_c\(tree)_\($0)", ["LastName": .string("Contact \(tree)-\($0)"), "AccountId": .string("local_a\(tree)")]) }
        }, into: "Contacts", pipeline)

        /// Every record synced keeps the date the org gave it, or is held as created (and the org's
        /// record is unchanged since); returns how many are held as created.
        @discardableResult
        func expectServerDates(_ soup: String, _ object: String) async throws -> Int {
            let entries = try await bench.entries(soup, pipeline).filter { !$0.isDirty }
            let server = try await bench.query("SELECT Id, CreatedDate, LastModifiedDate FROM \(object)")
            let byId = Dictionary(uniqueKeysWithValues: server.map { ($0["Id"]!.stringValue!, $0) })
            #expect(!entries.isEmpty && entries.allSatisfy { entry in
                guard let record = byId[entry["Id"]?.stringValue ?? ""] else { return false }
                return entry.isAsCreated(dateField: "LastModifiedDate")
                    ? record["LastModifiedDate"] == record["CreatedDate"] : entry["LastModifiedDate"] == record["LastModifiedDate"]
            }, "\(object): \(entries.map { ($0["Id"] ?? .null, $0["LastModifiedDate"] ?? .null, $0[SyncField.asCreated] ?? .null) }) \(byId)")
            return entries.filter { $0.isAsCreated(dateField: "LastModifiedDate") }.count
        }

        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 0 && first.report.stages[0].counts.filter { $0.value > 0 } == ["created": 9, "updated": 1], "\(first.report.stages[0].counts)")
        #expect(first.report.api.byKind == ["composite": 1, "query": 1], "one request writes and reads back, one checks: \(first.report.api.byKind)")
        #expect(try await expectServerDates("Accounts", "Account") == 0, "the new parents and the updated one are dated")
        #expect(try await expectServerDates("Contacts", "Contact") == 6, "the new children are held as created")

        // Every record changed here, a new tree, and an update the org refuses: the request's
        // Contact retrieve cannot be resolved, so the Contacts' dates are read after.
        bench.advanceClock()
        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        try await bench.put(accounts.map { H.flagged($0, SyncField.locallyUpdated, ["Name": .string("\($0["Name"]!.stringValue!) again")]) }
                            + [H.local("Account", "local_a3", ["Name": "New 3"])], into: "Accounts", pipeline)
        let refused = try #require(contacts.first { $0["LastName"] == "Contact 0-0" })
        try await bench.put(contacts.map { contact in
            H.flagged(contact, SyncField.locallyUpdated,
                      ["LastName": .string(contact == refused ? String(repeating: "z", count: 81) : "\(contact["LastName"]!.stringValue!) again")])
        } + [H.local("Contact", "local_c3_0", ["LastName": "Contact 3-0", "AccountId": "local_a3"]),
             H.local("Contact", "local_c3_1", ["LastName": "Contact 3-1", "AccountId": "local_a3"])],
                            into: "Contacts", pipeline)
        let second = try await bench.run(pipeline)
        #expect(second.report.stages[0].counts.filter { $0.value > 0 } == ["created": 3, "updated": 9, "failed": 1], "no conflict with our own writes: \(second.report.stages[0].counts)")
        // Creates and updates of two objects take two requests (four calls, two retrieves).
        #expect(second.report.api.byKind == ["composite": 3, "query": 1], "two writes, the Contacts' dates read after: \(second.report.api.byKind)")
        #expect(try await expectServerDates("Accounts", "Account") == 0)
        #expect(try await expectServerDates("Contacts", "Contact") == 2, "only the new children are held as created")
        #expect(try await bench.entries("Contacts", pipeline).filter(\.isDirty).map(\.lastErrorCode) == ["STRING_TOO_LONG"])
    }

    /// A record this sync created and then changed in the org is a conflict when its tree is
    /// changed here (LEAVE_IF_CHANGED): a new child is held as created (its org record's
    /// LastModifiedDate later than its CreatedDate), a new parent dated; the unchanged tree goes.
    @Test func aRecordHeldAsCreatedAndChangedInTheOrgIsAConflict() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try pipeline(bench, strategy: "auto", mergeMode: "LEAVE_IF_CHANGED")
        typealias H = SyncHarness
        try await bench.put((0..<3).map { H.local("Account", "local_a\($0)", ["Name": .string("New \($0)")]) }, into: "Accounts", pipeline)
        try await bench.put((0..<3).map { H.local("Contact", "local_c\($0)", ["LastName": .string("Contact \($0)"), "AccountId": .string("local_a\($0)")]) },
                            into: "Contacts", pipeline)
        let first = try await bench.run(pipeline)
        #expect(first.exitCode == 0 && first.report.api.byKind.filter { $0.key != "versions" } == ["composite": 1], "no date read: \(first.report.api.byKind)")
        bench.advanceClock()
        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        #expect(contacts.allSatisfy { $0.isAsCreated(dateField: "LastModifiedDate") && $0["LastModifiedDate"] == nil })
        #expect(accounts.allSatisfy { !$0.isAsCreated(dateField: "LastModifiedDate") && $0["LastModifiedDate"] != nil }, "parents of new children are read back")
        let parentChanged = try #require(accounts.first { $0["Name"] == "New 0" })
        let childChanged = try #require(contacts.first { $0["LastName"] == "Contact 1" })
        try await bench.client.update("Account", id: parentChanged["Id"]!.stringValue!, ["Name": "Renamed in the org"])
        try await bench.client.update("Contact", id: childChanged["Id"]!.stringValue!, ["LastName": "Renamed in the org"])
        try await bench.put(accounts.map { H.flagged($0, SyncField.locallyUpdated, ["Name": .string("\($0["Name"]!.stringValue!) here")]) },
                            into: "Accounts", pipeline)
        let second = try await bench.run(pipeline)
        #expect(second.report.stages[0].counts.filter { $0.value > 0 } == ["conflicts": 2, "updated": 1], "\(second.report.stages[0].counts)")
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(parentChanged["Id"]!.stringValue!)'").first?["Name"] == "Renamed in the org")
        let left = try await bench.entries("Accounts", pipeline).filter(\.isDirty)
        #expect(left.count == 2 && left.allSatisfy { $0.lastErrorCode == "CONFLICT" }, "\(left)")
        let byChild = try #require(left.first { $0["Name"] == "New 1 here" })
        #expect((byChild[SyncField.lastError]?.stringValue ?? "").contains("Contact \(childChanged["Id"]!.stringValue!) changed on the server") &&
                (byChild[SyncField.lastError]?.stringValue ?? "").contains("(as created)"), "\(byChild)")
        let sent = try #require(try await bench.entries("Accounts", pipeline).first { $0["Name"] == "New 2 here" })
        #expect(!sent.isDirty && !sent.isAsCreated(dateField: "LastModifiedDate") && sent["LastModifiedDate"] != nil, "updated: dated again")
    }

    @Test func aGraphTreeIsAllOrNothing() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try pipeline(bench, strategy: "graph")
        typealias H = SyncHarness
        try await bench.put([H.local("Account", "local_bad", ["Name": "Bad tree"]), H.local("Account", "local_good", ["Name": "Good tree"])],
                            into: "Accounts", pipeline)
        try await bench.put([H.local("Contact", "local_c1", ["LastName": "Fine", "AccountId": "local_bad"]),
                             H.local("Contact", "local_c2", ["LastName": .string(String(repeating: "z", count: 81)), "AccountId": "local_bad"]),
                             H.local("Contact", "local_c3", ["LastName": "Fine too", "AccountId": "local_good"])], into: "Contacts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 3)
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Bad tree'").isEmpty, "the failed tree was rolled back")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Good tree'").count == 1)
        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        let bad = try #require(accounts.first { $0["Name"] == "Bad tree" })
        #expect(bad.isDirty && bad.lastErrorCode == "STRING_TOO_LONG", "every record of the tree carries the cause")
        #expect(contacts.filter { $0["AccountId"] == "local_bad" }.allSatisfy { $0.isDirty && $0.lastErrorCode == "STRING_TOO_LONG" })
        #expect(contacts.first { $0["LastName"] == "Fine too" }?.isDirty == false)
    }

    @Test func stopsBeforeTheDailyBudgetRunsOut() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try pipeline(bench, strategy: "perTree", extra: #", "minApiRemainingPercent": 50"#)
        try await bench.put((0..<10).map { SyncHarness.local("Account", "local_\($0)", ["Name": .string("A\($0)")]) }, into: "Accounts", pipeline)
        try await bench.setFaults(["dailyRequestLimit": 10])
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 1)
        #expect(outcome.report.stages[0].error?.contains("minApiRemainingPercent") == true)
        let created = try await bench.entries("Accounts", pipeline).filter { !$0.isDirty }.count
        #expect(created > 0 && created < 10, "what was confirmed before the stop is saved; the rest waits")
        let sync = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "trees")
        #expect(sync.status == .failed)
    }
}
