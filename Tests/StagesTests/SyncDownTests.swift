import Connectors
import Formats
import Foundation
import JSON
import Soups
import Stages
import Synchronization
import Testing

/// `syncDown`, `resync` and `cleanGhosts`, end to end over the emulator.
@Suite struct SyncDownTests {
    typealias H = SyncHarness

    /// Accounts whose name starts with T or with Acme, with their contacts — an OR filter.
    static func syncs(mergeMode: String = "OVERWRITE", name: String = "down") -> String {
        """
        { "syncName": "\(name)", "syncType": "syncDown", "soupName": "Accounts",
          "target": { "type": "parent_children", "relationshipType": "MASTER_DETAIL",
            "parent": { "sobjectType": "Account", "soupName": "Accounts" }, "parentFieldlist": ["Name", "Industry"],
            "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
            "childrenFieldlist": ["LastName", "AccountId"], "parentSoqlFilter": "Name LIKE 'T%' OR Name LIKE 'Acme%'" },
          "options": { "mergeMode": "\(mergeMode)" } }
        """
    }

    func createAccount(_ bench: SyncHarness, _ name: String, contacts: Int) async throws -> String {
        let id = try await bench.client.create("Account", ["Name": .string(name)])
        for chunk in (0..<contacts).map({ $0 }).chunked(into: 200) {
            _ = try await bench.client.createRecords(chunk.map { ["attributes": ["type": "Contact"], "LastName": .string("\(name)-\($0)"),
                                                                 "AccountId": .string(id)] })
        }
        return id
    }

    @Test func fullSyncDownStoresParentsWithAllTheirChildren() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: "[\(Self.syncs())]", stages: #"[ { "id": "down", "type": "syncDown", "sync": "down" } ]"#)
        _ = try await createAccount(bench, "T many", contacts: 250)
        _ = try await createAccount(bench, "T none", contacts: 0)
        _ = try await createAccount(bench, "Other", contacts: 2)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0].error ?? "")")
        #expect(outcome.report.stages[0].byObject["Account"]?["created"] == 3, "Acme, T many, T none")
        #expect(outcome.report.stages[0].byObject["Contact"]?["created"] == 252)
        let store = try SoupStore.openForReading(path: pipeline.store)
        let sync = try await store.syncs.state(named: "down")
        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        #expect(Set(accounts.compactMap { $0["Name"]?.stringValue }) == ["Acme Corporation", "T many", "T none"])
        #expect(contacts.count == 252, "the 250 children were paged and all followed")
        #expect((accounts + contacts).allSatisfy { $0[SyncField.syncId] == .integer(sync.id) && !$0.isDirty && $0[SyncField.lastError] == .null })
        let accountIds = Set(accounts.compactMap { $0["Id"]?.stringValue })
        #expect(contacts.allSatisfy { accountIds.contains($0["AccountId"]?.stringValue ?? "") })
        #expect(accounts.allSatisfy { $0["Contacts"] == nil }, "children are stored in their own soup")
        #expect(sync.status == .done && sync.progress == 100 && sync.totalSize == 3)
        let newest = (accounts + contacts).compactMap { ServerTimestamp.milliseconds($0["LastModifiedDate"]) }.max()
        #expect(sync.maxTimeStamp == newest)
        let statuses = bench.observer.events.compactMap { event -> String? in
            if case .progress(_, let sync?, let status, let progress, let total) = event, sync == "down" { return "\(status) \(progress) \(total)" }
            return nil
        }
        #expect(statuses == ["RUNNING 0 -1", "RUNNING 0 3", "DONE 100 3"])
        // markDirty as auto sees nothing changed: sync down recorded what the org confirmed.
        let mark = try bench.pipeline(syncs: "[\(Self.syncs())]", stages: #"[ { "id": "mark", "type": "markDirty", "soup": "Accounts" } ]"#)
        #expect(try await bench.run(mark).report.stages[0].counts["unchanged"] == 3)
    }

    @Test func leaveIfChangedKeepsTreesWithLocalEdits() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let syncs = "[\(Self.syncs(mergeMode: "LEAVE_IF_CHANGED", name: "leave")), \(Self.syncs(name: "over"))]"
        let first = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "over" } ]"#)
        let parentEdit = try await createAccount(bench, "T parent edit", contacts: 1)
        let childEdit = try await createAccount(bench, "T child edit", contacts: 2)
        let untouched = try await createAccount(bench, "T untouched", contacts: 1)
        #expect(try await bench.run(first).exitCode == 0)
        // Local edits: a parent, and a child of another tree.
        var accounts = try await bench.entries("Accounts", first)
        var contacts = try await bench.entries("Contacts", first)
        let parentEntry = accounts.first { $0["Id"]?.stringValue == parentEdit }!
        let childEntry = contacts.first { $0["AccountId"]?.stringValue == childEdit }!
        try await bench.put([H.flagged(parentEntry, SyncField.locallyUpdated, ["Name": "T parent edit (local)"])], into: "Accounts", first)
        try await bench.put([H.flagged(childEntry, SyncField.locallyUpdated, ["LastName": "local"])], into: "Contacts", first)
        // Server edits everywhere.
        bench.advanceClock()
        for id in [parentEdit, childEdit, untouched] {
            try await bench.client.update("Account", id: id, ["Industry": "Energy"])
            for contact in try await bench.query("SELECT Id FROM Contact WHERE AccountId = '\(id)'") {
                try await bench.client.update("Contact", id: contact["Id"]!.stringValue!, ["LastName": "server"])
            }
        }
        let leave = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "leave" } ]"#)
        let outcome = try await bench.run(leave)
        #expect(outcome.report.stages[0].counts["conflicts"] == 2, "one dirty record in each of two trees")
        accounts = try await bench.entries("Accounts", leave)
        contacts = try await bench.entries("Contacts", leave)
        #expect(accounts.first { $0["Id"]?.stringValue == parentEdit }?["Name"] == "T parent edit (local)")
        #expect(accounts.first { $0["Id"]?.stringValue == parentEdit }?["Industry"] == .null, "the whole tree was left alone")
        #expect(contacts.filter { $0["AccountId"]?.stringValue == parentEdit }.allSatisfy { $0["LastName"] != "server" })
        #expect(accounts.first { $0["Id"]?.stringValue == childEdit }?["Industry"] == .null, "a dirty child keeps its parent too")
        #expect(contacts.filter { $0["AccountId"]?.stringValue == childEdit }.allSatisfy { $0["LastName"] != "server" })
        #expect(accounts.first { $0["Id"]?.stringValue == untouched }?["Industry"] == "Energy")
        #expect(contacts.filter { $0["AccountId"]?.stringValue == untouched }.allSatisfy { $0["LastName"] == "server" })
        #expect(accounts.filter(\.isDirty).count == 1 && contacts.filter(\.isDirty).count == 1)

        let over = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "over" } ]"#)
        #expect(try await bench.run(over).exitCode == 0)
        accounts = try await bench.entries("Accounts", over)
        contacts = try await bench.entries("Contacts", over)
        #expect(accounts.allSatisfy { !$0.isDirty } && contacts.allSatisfy { !$0.isDirty }, "OVERWRITE replaces local edits")
        #expect(accounts.first { $0["Id"]?.stringValue == parentEdit }?["Name"] == "T parent edit")
        let stillLocal = contacts.filter { $0["LastName"] == "local" }
        #expect(stillLocal.isEmpty)
    }

    @Test func resyncFetchesChangedParentsAndChildrenUnderUnchangedParents() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: "[\(Self.syncs())]", stages: #"[ { "id": "again", "type": "resync", "sync": "down" } ]"#)
        let parentChanged = try await createAccount(bench, "T parent", contacts: 2)
        let childChanged = try await createAccount(bench, "T child", contacts: 2)
        _ = try await createAccount(bench, "T quiet", contacts: 2)
        bench.advanceClock()
        _ = try await createAccount(bench, "T latest", contacts: 0)
        let first = try await bench.run(pipeline)
        #expect(first.report.stages[0].byObject["Account"]?["created"] == 5, "the first resync is a full sync")
        let before = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "down")

        bench.advanceClock(seconds: 5)
        try await bench.client.update("Account", id: parentChanged, ["Industry": "Banking"])
        let child = try await bench.query("SELECT Id FROM Contact WHERE AccountId = '\(childChanged)' LIMIT 1")[0]["Id"]!.stringValue!
        try await bench.client.update("Contact", id: child, ["LastName": "renamed on the server"])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0)
        #expect(second.report.stages[0].byObject["Account"]?["updated"] == 1)
        #expect(second.report.stages[0].byObject["Contact"]?["updated"] == 1, "the child changed under an unchanged parent")
        // Only what changed at or after maxTimeStamp's second comes again: "T latest" (stored
        // unchanged), not the older parents.
        #expect(second.report.stages[0].byObject["Account"]?["unchanged"] == 1, "\(second.report.stages[0].byObject)")
        let contacts = try await bench.entries("Contacts", pipeline)
        #expect(contacts.first { $0["Id"]?.stringValue == child }?["LastName"] == "renamed on the server")
        #expect(contacts.first { $0["Id"]?.stringValue == child }?["AccountId"]?.stringValue == childChanged)
        let after = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "down")
        #expect(after.maxTimeStamp > before.maxTimeStamp)

        // A change in the same second as maxTimeStamp is not missed.
        try await bench.client.update("Account", id: childChanged, ["Industry": "Technology"])
        let third = try await bench.run(pipeline)
        #expect(third.report.stages[0].byObject["Account"]?["updated"] == 1)
        let accounts = try await bench.entries("Accounts", pipeline)
        #expect(accounts.first { $0["Id"]?.stringValue == childChanged }?["Industry"] == "Technology")
    }

    /// The pipeline's syncs are the source of truth: a changed query reaches the stored sync (and
    /// its next resync fetches everything the new query selects), an unchanged file changes nothing.
    @Test func aSyncRedefinedInTheFileIsRedefinedInTheStore() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        func syncs(_ filter: String) -> String {
            #"[ { "syncName": "some", "syncType": "syncDown", "soupName": "Accounts", "target": { "type": "soql", "query": "SELECT Name FROM Account WHERE Name LIKE '\#(filter)'" }, "options": { "mergeMode": "OVERWRITE" } } ]"#
        }
        _ = try await bench.client.createRecords(["Q1", "Q2", "W1"].map { ["attributes": ["type": "Account"], "Name": .string($0)] })
        let stages = #"[ { "id": "down", "type": "resync", "sync": "some" } ]"#
        let first = try await bench.run(try bench.pipeline(syncs: syncs("Q%"), stages: stages))
        #expect(first.report.stages[0].counts["created"] == 2)
        let before = bench.observer.events.count
        let same = try await bench.run(try bench.pipeline(syncs: syncs("Q%"), stages: stages))
        #expect(same.report.stages[0].counts["created"] == 0)
        #expect(!bench.observer.events[before...].contains { $0.text.contains("changed in the pipeline's syncs") }, "unchanged: no redefinition")
        let widened = try await bench.run(try bench.pipeline(syncs: syncs("%1"), stages: stages))
        #expect(widened.report.stages[0].counts["created"] == 1, "W1, older than the last sync, is fetched: the new query starts over")
        #expect(bench.observer.events.contains { $0.text.contains("sync some: its target changed") && $0.text.contains("maxTimeStamp reset") })
        let store = try SoupStore.openForReading(path: try bench.pipeline(syncs: syncs("%1"), stages: stages).store)
        defer { try? store.close() }
        #expect(try await store.syncs.state(named: "some").target["query"]?.stringValue?.hasSuffix("LIKE '%1'") == true)
    }

    @Test func aStoppedSyncResumesWhereItStopped() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let syncs = """
            [ { "syncName": "all", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "soql", "query": "SELECT Name FROM Account WHERE Name LIKE 'R%'", "maxBatchSize": 200 } } ]
            """
        let pipeline = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "all" } ]"#)
        for batch in 0..<3 {
            _ = try await bench.client.createRecords((0..<150).map { ["attributes": ["type": "Account"], "Name": .string("R\(batch)-\($0)")] })
            bench.advanceClock()
        }
        #expect(try await bench.run(pipeline).report.stages[0].counts["created"] == 450)
        // A run that died mid-sync leaves the sync RUNNING, its maxTimeStamp at the last page it stored.
        let store = try SoupStore(path: pipeline.store)
        var state = try await store.syncs.state(named: "all")
        let middle = try await bench.query("SELECT LastModifiedDate FROM Account WHERE Name = 'R1-0'")[0]
        state.status = .running
        state.maxTimeStamp = ServerTimestamp.milliseconds(middle["LastModifiedDate"])!
        try await store.syncs.save(state)
        try store.close()
        let eventsBefore = bench.observer.events.count
        let resumed = try await bench.run(pipeline)
        #expect(resumed.exitCode == 0)
        let statuses = bench.observer.events.dropFirst(eventsBefore).compactMap { event -> String? in
            if case .progress(_, "all"?, let status, let progress, let total) = event { return "\(status) \(progress) \(total)" }
            return nil
        }
        #expect(statuses == ["RUNNING 0 -1", "RUNNING 0 300", "RUNNING 66 300", "DONE 100 300"], "one RUNNING per page but the last")
        #expect(bench.observer.lines.contains { $0.contains("sync all was RUNNING when its process died") })
        let counts = resumed.report.stages[0].counts
        #expect(counts["unchanged"] == 300, "only the records from where it stopped were fetched again: \(counts)")
        #expect(counts["created"] == 0)
        let done = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "all")
        #expect(done.status == .done && done.totalSize == 300)
    }

    @Test func ghostsAreRemovedPerSyncAndNeverWhenDirty() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let syncs = """
            [ { "syncName": "energy", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "soql", "query": "SELECT Name FROM Account WHERE Industry = 'Energy'" } },
              { "syncName": "zed", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "soql", "query": "SELECT Name FROM Account WHERE Name LIKE 'Z%'" } } ]
            """
        let both = try bench.pipeline(syncs: syncs, stages: """
            [ { "id": "a", "type": "syncDown", "sync": "energy" }, { "id": "b", "type": "syncDown", "sync": "zed", "after": ["a"] } ]
            """)
        let shared = try await bench.client.create("Account", ["Name": "Z shared", "Industry": "Energy"])
        let zOnly = try await bench.client.create("Account", ["Name": "Z only", "Industry": "Banking"])
        let energyOnly = try await bench.client.create("Account", ["Name": "E only", "Industry": "Energy"])
        let energyDirty = try await bench.client.create("Account", ["Name": "E dirty", "Industry": "Energy"])
        let energyKept = try await bench.client.create("Account", ["Name": "E kept", "Industry": "Energy"])
        #expect(try await bench.run(both).exitCode == 0)
        let entries = try await bench.entries("Accounts", both)
        try await bench.put([H.flagged(entries.first { $0["Id"]?.stringValue == energyDirty }!, SyncField.locallyUpdated, ["Name": "E dirty!"])],
                            into: "Accounts", both)
        for id in [shared, zOnly, energyOnly, energyDirty] { try await bench.client.delete("Account", id: id) }

        let cleanEnergy = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "ghosts", "type": "cleanGhosts", "sync": "energy" } ]"#)
        let first = try await bench.run(cleanEnergy)
        #expect(first.report.stages[0].counts == ["ghostsRemoved": 1], "E only; E dirty is dirty; Z shared belongs to the sync that wrote it last")
        let ids = Set(try await bench.entries("Accounts", both).compactMap { $0["Id"]?.stringValue })
        #expect(!ids.contains(energyOnly) && ids.contains(energyDirty) && ids.contains(energyKept) && ids.contains(shared) && ids.contains(zOnly))

        let cleanZed = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "ghosts", "type": "cleanGhosts", "sync": "zed" } ]"#)
        let second = try await bench.run(cleanZed)
        #expect(second.report.stages[0].counts == ["ghostsRemoved": 2])
        #expect(second.report.stages[0].byObject == ["Account": ["ghostsRemoved": 2]])
        let names = Set(try await bench.entries("Accounts", both).compactMap { $0["Name"]?.stringValue })
        #expect(names == ["E dirty!", "E kept", "Globex"], "Globex (seeded, Energy) still exists in the org")
    }

    /// A custom target's ghost predicate on whole entries (`isGhost:`) sees every member of each
    /// clean entry of its sync; the built-in targets' id predicate (`isGhostId:`) is given ids.
    @Test func ghostSweepsGiveWholeEntriesOrIds() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let syncs = """
            [ { "syncName": "w", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "soql", "query": "SELECT Id, Name, Industry, LastModifiedDate FROM Account WHERE Name LIKE 'W %'" } } ]
            """
        let pipeline = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "w" } ]"#)
        let banking = try await bench.client.create("Account", ["Name": "W bank", "Industry": "Banking"])
        let energy = try await bench.client.create("Account", ["Name": "W energy", "Industry": "Energy"])
        #expect(try await bench.run(pipeline).exitCode == 0)
        let store = try SoupStore(path: pipeline.store)
        defer { try? store.close() }
        let syncId = try await store.syncs.state(named: "w").id
        let seen = Mutex<[String]>([])
        let byIndustry = try await GhostSweep.remove(in: store, soup: "Accounts", syncId: syncId, object: "Account") { entry in
            seen.withLock { $0.append(entry["Name"]?.stringValue ?? "?") }
            return entry["Industry"] == "Banking"
        }
        #expect(byIndustry.counts == ["ghostsRemoved": 1] && seen.withLock { $0.sorted() } == ["W bank", "W energy"])
        let byId = try await GhostSweep.remove(in: store, soup: "Accounts", syncId: syncId, object: "Account",
                                               isGhostId: { $0 == SalesforceId.key(.string(energy)) })
        #expect(byId.counts == ["ghostsRemoved": 1])
        #expect(try await store.entries(in: "Accounts").isEmpty, "\(banking) and \(energy) both swept")
    }

    @Test func parentChildrenGhostsTakeTheirChildrenAndSpareDirtyTrees() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: "[\(Self.syncs())]", stages: #"[ { "id": "down", "type": "syncDown", "sync": "down" } ]"#)
        let gone = try await createAccount(bench, "T gone", contacts: 2)
        let protected = try await createAccount(bench, "T protected", contacts: 1)
        let thinned = try await createAccount(bench, "T thinned", contacts: 2)
        #expect(try await bench.run(pipeline).exitCode == 0)
        let contacts = try await bench.entries("Contacts", pipeline)
        let protectedChild = contacts.first { $0["AccountId"]?.stringValue == protected }!
        try await bench.put([H.flagged(protectedChild, SyncField.locallyUpdated, ["LastName": "edited"])], into: "Contacts", pipeline)
        try await bench.client.delete("Account", id: gone)
        try await bench.client.delete("Account", id: protected)
        let removedChild = try await bench.query("SELECT Id FROM Contact WHERE AccountId = '\(thinned)' LIMIT 1")[0]["Id"]!.stringValue!
        try await bench.client.delete("Contact", id: removedChild)

        let clean = try bench.pipeline(syncs: "[\(Self.syncs())]", stages: #"[ { "id": "ghosts", "type": "cleanGhosts", "sync": "down" } ]"#)
        let outcome = try await bench.run(clean)
        #expect(outcome.report.stages[0].byObject == ["Account": ["ghostsRemoved": 1], "Contact": ["ghostsRemoved": 3]],
                "T gone and its 2 contacts, and the contact deleted under T thinned; T protected keeps its dirty child")
        let accounts = try await bench.entries("Accounts", clean)
        let left = try await bench.entries("Contacts", clean)
        #expect(!accounts.contains { $0["Id"]?.stringValue == gone })
        #expect(accounts.contains { $0["Id"]?.stringValue == protected })
        #expect(left.contains { $0["Id"] == protectedChild["Id"] && $0.isDirty })
        #expect(!left.contains { $0["Id"]?.stringValue == removedChild })
        #expect(left.filter { $0["AccountId"]?.stringValue == thinned }.count == 1)
    }

    /// A pipeline of one `syncDown` stage whose sync, `bulk`, runs `query` as a Bulk query job
    /// into the Accounts soup.
    static func bulkSyncDown(_ bench: SyncHarness, query: String) throws -> PipelineDefinition {
        try bench.pipeline(syncs: """
            [ { "syncName": "bulk", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "soql", "query": "\(query)", "bulk": true } } ]
            """, stages: #"[ { "id": "down", "type": "syncDown", "sync": "bulk" } ]"#)
    }

    @Test func aBulkQueryFeedsASyncDown() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try Self.bulkSyncDown(bench, query: "SELECT Name, Industry FROM Account WHERE Name LIKE 'B%'")
        _ = try await bench.client.createRecords((0..<3).map { ["attributes": ["type": "Account"], "Name": .string("B\($0)"),
                                                                "Industry": $0 == 0 ? .null : "Energy"] })
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0].error ?? "")")
        #expect(outcome.report.stages[0].byObject == ["Account": ["created": 3]])
        #expect((outcome.report.api.byKind["bulk"] ?? 0) >= 2 && (outcome.report.api.byKind["bulkStatus"] ?? 0) >= 1, "job, status, results")
        #expect(outcome.report.api.byKind["query"] == nil, "the job's size comes from its status: no COUNT() query")
        let accounts = try await bench.entries("Accounts", pipeline).sorted { ($0["Name"]?.stringValue ?? "") < ($1["Name"]?.stringValue ?? "") }
        #expect(accounts.map { $0["Name"]?.stringValue ?? "" } == ["B0", "B1", "B2"])
        #expect(accounts[0]["Industry"] == .null && accounts[1]["Industry"] == "Energy")
        #expect(accounts.allSatisfy { $0["attributes"]?["type"] == "Account" && $0["Id"]?.stringValue?.hasPrefix("001") == true })
        let sync = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "bulk")
        #expect(sync.status == .done && sync.totalSize == 3 && sync.maxTimeStamp > 0)
    }
    /// A Bulk query job's rows are stored 2,000 to a page, every page of its results read, the
    /// sync's size the job's own.
    @Test func aBulkQueryOfManyRowsIsStoredInPages() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try Self.bulkSyncDown(bench, query: "SELECT Name, Industry FROM Account WHERE Name LIKE 'Many %'")
        for start in stride(from: 0, to: 2_500, by: 200) {
            let results = try await bench.client.createRecords((start..<min(start + 200, 2_500)).map {
                ["attributes": ["type": "Account"], "Name": .string("Many \($0)"), "Industry": "Energy"]
            })
            #expect(results.allSatisfy { $0.success })
        }
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0].error ?? "")")
        #expect(outcome.report.stages[0].byObject == ["Account": ["created": 2_500]])
        let accounts = try await bench.entries("Accounts", pipeline)
        #expect(accounts.count == 2_500 && Set(accounts.compactMap { $0["Name"]?.stringValue }).count == 2_500)
        let store = try SoupStore.openForReading(path: pipeline.store)
        defer { try? store.close() }
        let sync = try await store.syncs.state(named: "bulk")
        #expect(sync.status == .done && sync.totalSize == 2_500 && sync.progress == 100)
    }

    /// Runs sync `name` down, through a target registered as `type` (`query`, pages of 200), once
    /// `count` accounts named `prefix` and three digits are in the org.
    private func syncDown(through type: String, _ make: @escaping SyncDownTargetMaker, name: String, query: String, accounts count: Int,
                          prefix: String, in bench: SyncHarness) async throws -> (RunOutcome, PipelineDefinition) {
        var registry = testRegistry
        registry.register(syncDownTarget: [type], make)
        let syncs = """
            [ { "syncName": "\(name)", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "\(type)", "query": "\(query)", "maxBatchSize": 200 } } ]
            """
        let pipeline = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "\#(name)" } ]"#, registry: registry)
        for chunk in Array(0..<count).chunked(into: 200) {
            _ = try await bench.client.createRecords(chunk.map { ["attributes": ["type": "Account"], "Name": .string(prefix + String(format: "%03d", $0))] })
        }
        return (try await bench.run(pipeline), pipeline)
    }

    /// A page is written while the next is read and merged: a record of the page under way that
    /// comes again in the next one is read once written, so it is stored once (updated, not
    /// created twice). Records fold onto 200 ids here, the second page's onto the first's.
    @Test func aRecordOfThePageBeingWrittenThatComesAgainIsStoredOnce() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let (outcome, pipeline) = try await syncDown(through: "folding", { sync, settings in
            FoldingTarget(inner: try SOQLSyncDownTarget(sync: sync, settings: settings))
        }, name: "fold", query: "SELECT Name FROM Account WHERE Name LIKE 'F%' ORDER BY Name", accounts: 300, prefix: "F", in: bench)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0].error ?? "")")
        #expect(outcome.report.stages[0].byObject == ["Account": ["created": 200, "updated": 100]])
        let accounts = try await bench.entries("Accounts", pipeline)
        #expect(accounts.count == 200)
        let names = Dictionary(accounts.map { ($0["Id"]?.stringValue ?? "", $0["Name"]?.stringValue ?? "") }, uniquingKeysWith: { $1 })
        #expect(names["folded-0"] == "F200" && names["folded-99"] == "F299" && names["folded-100"] == "F100")
        let sync = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "fold")
        #expect(sync.status == .done && sync.totalSize == 300)
    }

    /// Each page's write is queued behind the one before while that one runs: when a page's write
    /// fails, the pages after it store nothing, nor their progress and `maxTimeStamp`, and the sync
    /// fails with that page's error.
    @Test func aPageWhoseWriteFailsLeavesNothingOfTheLaterPagesStored() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let (outcome, pipeline) = try await syncDown(through: "failing", { sync, settings in
            SecondPageFailingTarget(inner: try SOQLSyncDownTarget(sync: sync, settings: settings))
        }, name: "fail", query: "SELECT Name FROM Account WHERE Name LIKE 'P%'", accounts: 600, prefix: "P", in: bench)
        #expect(outcome.exitCode != 0)
        #expect(outcome.report.stages[0].error?.contains(#"does not have an index on "Missing""#) == true, "\(outcome.report.stages[0].error ?? "")")
        // The first page only: its entries, and the state it was written with.
        let accounts = try await bench.entries("Accounts", pipeline)
        #expect(accounts.count == 200)
        let sync = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "fail")
        #expect(sync.status == .failed && sync.progress == 33)
        #expect(sync.maxTimeStamp == accounts.compactMap { ServerTimestamp.milliseconds($0["LastModifiedDate"]) }.max())
    }
}

/// A SOQL target whose second page's write fails: it also merges an entry on a key the soup
/// does not index.
final class SecondPageFailingTarget: SyncDownTarget {
    let inner: SOQLSyncDownTarget
    private let pages = Mutex(0)

    init(inner: SOQLSyncDownTarget) {
        self.inner = inner
    }

    func queries(since: Int64?) throws -> [SyncDownQuery] { try inner.queries(since: since) }

    func save(_ records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageOutcome {
        try await inner.save(records, from: query, in: context)
    }

    func changes(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        guard var planned = try await inner.changes(for: records, from: query, in: context) else { return nil }
        if pages.withLock({ $0 += 1; return $0 }) == 2 {
            planned.changes.merge([["Name": "unmatched"]], into: "Accounts", matching: "Missing")
        }
        return planned
    }

    func cleanGhosts(in context: SyncDownContext) async throws -> StageResult { try await inner.cleanGhosts(in: context) }
}

/// A SOQL target whose record `F<n>` is stored under the id `folded-<n % 200>`.
struct FoldingTarget: SyncDownTarget {
    let inner: SOQLSyncDownTarget

    func fold(_ records: [JSONObject]) -> [JSONObject] {
        records.map { record in
            var folded = record
            let number = Int(record["Name"]?.stringValue?.dropFirst() ?? "") ?? 0
            folded["Id"] = .string("folded-\(number % 200)")
            return folded
        }
    }

    func queries(since: Int64?) throws -> [SyncDownQuery] { try inner.queries(since: since) }

    func save(_ records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageOutcome {
        try await inner.save(fold(records), from: query, in: context)
    }

    func changes(for records: [JSONObject], from query: SyncDownQuery, in context: SyncDownContext) async throws -> SyncDownPageChanges? {
        try await inner.changes(for: fold(records), from: query, in: context)
    }

    func cleanGhosts(in context: SyncDownContext) async throws -> StageResult { try await inner.cleanGhosts(in: context) }
}
