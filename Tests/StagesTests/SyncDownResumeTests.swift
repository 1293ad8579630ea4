import Connectors
import Foundation
import JSON
import Soups
import Stages
import Testing

/// Where a sync down stands mid-run — what a stopped run resumes from — and the id list ghost
/// cleanup compares with, end to end over the emulator.
@Suite struct SyncDownResumeTests {
    /// Asks the run to stop (as SIGINT does) once the sync has stored its first page.
    final class StopAfterFirstPage: RunObserver {
        let control = RunControl()
        let sync: String

        init(sync: String) { self.sync = sync }

        func handle(_ event: RunEvent, at date: Date) {
            if case .progress(_, let name?, "RUNNING", let progress, _) = event, name == sync, progress > 0 {
                control.requestStop(exitCode: 130)
            }
        }
    }

    /// Runs `pipeline` with `observer` and `control` (the harness runs without either).
    static func run(_ pipeline: PipelineDefinition, in bench: SyncHarness, observer: any RunObserver, control: RunControl) async throws -> RunOutcome {
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
        }
        var options = RunOptions()
        options.reportDirectory = (bench.directory as NSString).appendingPathComponent("report-\(UUID().uuidString.prefix(6))")
        return try await PipelineRunner(pipeline: pipeline, options: options, observer: observer, orgConnector: connector, control: control).run()
    }

    static let trees = """
        [ { "syncName": "trees", "syncType": "syncDown", "soupName": "Accounts",
            "target": { "type": "parent_children", "relationshipType": "MASTER_DETAIL", "maxBatchSize": 200,
              "parent": { "sobjectType": "Account", "soupName": "Accounts" }, "parentFieldlist": ["Name"],
              "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
              "childrenFieldlist": ["LastName"], "parentSoqlFilter": "Name LIKE 'P%'" } } ]
        """

    /// A parent-children sync down is ordered by the parents' dates; a child of a first-page parent
    /// that is newer than every parent must not move `maxTimeStamp` past the parents of the pages
    /// not yet fetched, or the resumed run would skip them.
    @Test func aStoppedParentChildrenSyncResumesBehindANewerChild() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.trees, stages: #"[ { "id": "down", "type": "syncDown", "sync": "trees" } ]"#)
        // 1,000 parents, 200 to a second: pages of 200 parents, in date order.
        var firstParent = ""
        for second in 0..<5 {
            let saved = try await bench.client.createRecords((0..<200).map { ["attributes": ["type": "Account"], "Name": .string("P\(second)-\($0)")] })
            #expect(saved.allSatisfy { $0.success })
            if second == 0 { firstParent = saved[0].id ?? "" }
            bench.advanceClock()
        }
        // A child of a first-page parent, newer than every parent.
        let child = try await bench.client.create("Contact", ["LastName": "newest", "AccountId": .string(firstParent)])
        let childDate = try #require(ServerTimestamp.milliseconds(
            try await bench.query("SELECT LastModifiedDate FROM Contact WHERE Id = '\(child)'")[0]["LastModifiedDate"]))
        let parentDates = try await bench.query("SELECT LastModifiedDate FROM Account WHERE Name LIKE 'P%'")
            .compactMap { ServerTimestamp.milliseconds($0["LastModifiedDate"]) }
        #expect(parentDates.count == 1000 && parentDates.allSatisfy { $0 < childDate })

        // Slow pages, so the stop asked for after the first page lands before the last one.
        try await bench.setFaults(["latencyMs": 100])
        let stopper = StopAfterFirstPage(sync: "trees")
        let stopped = try await Self.run(pipeline, in: bench, observer: stopper, control: stopper.control)
        try await bench.setFaults([:])
        #expect(stopped.report.status == .stopped)
        let partial = try await bench.entries("Accounts", pipeline)
        #expect(partial.count >= 200 && partial.count < 1000, "stopped part-way: \(partial.count) of 1,000 parents stored")
        #expect(partial.contains { $0["Id"]?.stringValue == firstParent })
        let state = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "trees")
        #expect(state.status == .stopped)
        let storedParentsNewest = partial.compactMap { ServerTimestamp.milliseconds($0["LastModifiedDate"]) }.max()
        #expect(state.maxTimeStamp == storedParentsNewest, "mid-run, maxTimeStamp follows the parents the query is ordered by")
        #expect(state.maxTimeStamp < childDate)

        let resumed = try await bench.run(pipeline)
        #expect(resumed.exitCode == 0, "\(resumed.report.stages[0].error ?? "")")
        let accounts = try await bench.entries("Accounts", pipeline)
        let contacts = try await bench.entries("Contacts", pipeline)
        #expect(accounts.count == 1000, "every parent stored after the resume")
        #expect(Set(accounts.compactMap { $0["Id"]?.stringValue }).count == 1000)
        #expect(contacts.count == 1 && contacts[0]["Id"]?.stringValue == child && contacts[0]["AccountId"]?.stringValue == firstParent)
        let byObject = resumed.report.stages[0].byObject
        #expect(byObject["Account"]?["created"] == 1000 - partial.count, "\(byObject)")
        // The resume fetched from the stored parents' newest second on: those in that second come
        // again, unchanged; the child is read once, with its parent (it is in that second).
        let sameSecond = partial.filter { ServerTimestamp.milliseconds($0["LastModifiedDate"]) == storedParentsNewest }.count
        #expect(byObject["Account"]?["unchanged"] == sameSecond)
        #expect(byObject["Contact"] == ["unchanged": 1])
        let done = try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "trees")
        #expect(done.status == .done && done.progress == 100)
        #expect(done.maxTimeStamp == childDate, "at the end, maxTimeStamp is the newest record stored, children included")
    }

    /// A resync reads a child changed under a changed parent once (with its parent), and one changed
    /// under an unchanged parent once (on its own).
    @Test func aResyncReadsEveryChangedChildOnce() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.trees, stages: #"[ { "id": "again", "type": "resync", "sync": "trees" } ]"#)
        // The quiet parent is older than the first run's maxTimeStamp, so the resync does not fetch it.
        let quietParent = try await bench.client.create("Account", ["Name": "P quiet"])
        bench.advanceClock()
        let changedParent = try await bench.client.create("Account", ["Name": "P changed"])
        let underChanged = try await bench.client.create("Contact", ["LastName": "a", "AccountId": .string(changedParent)])
        let underQuiet = try await bench.client.create("Contact", ["LastName": "b", "AccountId": .string(quietParent)])
        #expect(try await bench.run(pipeline).report.stages[0].byObject == ["Account": ["created": 2], "Contact": ["created": 2]])

        bench.advanceClock()
        try await bench.client.update("Account", id: changedParent, ["Name": "P changed again"])
        try await bench.client.update("Contact", id: underChanged, ["LastName": "a2"])
        try await bench.client.update("Contact", id: underQuiet, ["LastName": "b2"])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0)
        #expect(second.report.stages[0].byObject == ["Account": ["updated": 1], "Contact": ["updated": 2]],
                "\(second.report.stages[0].byObject)")
        let contacts = try await bench.entries("Contacts", pipeline)
        #expect(Set(contacts.compactMap { $0["LastName"]?.stringValue }) == ["a2", "b2"])
        #expect(contacts.first { $0["Id"]?.stringValue == underQuiet }?["AccountId"]?.stringValue == quietParent)
    }

    /// With a LIMIT, the query's order picks its records; ghost cleanup keeps that order when it
    /// asks for the ids, so it never takes a record the query still returns for a ghost.
    @Test func ghostsOfALimitedQueryAreFoundInItsOwnOrder() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let syncs = """
            [ { "syncName": "top", "syncType": "syncDown", "soupName": "Accounts",
                "target": { "type": "soql", "query": "SELECT Name FROM Account WHERE Name LIKE 'L%' ORDER BY Name DESC LIMIT 2" } } ]
            """
        let down = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "down", "type": "syncDown", "sync": "top" } ]"#)
        let clean = try bench.pipeline(syncs: syncs, stages: #"[ { "id": "ghosts", "type": "cleanGhosts", "sync": "top" } ]"#)
        var ids: [String: String] = [:]
        for name in ["L1", "L2", "L3"] { ids[name] = try await bench.client.create("Account", ["Name": .string(name)]) }
        #expect(try await bench.run(down).report.stages[0].byObject == ["Account": ["created": 2]])
        var names = Set(try await bench.entries("Accounts", down).compactMap { $0["Name"]?.stringValue })
        #expect(names == ["L2", "L3"])

        let nothingGone = try await bench.run(clean)
        #expect(nothingGone.exitCode == 0)
        #expect(nothingGone.report.stages[0].byObject == ["Account": ["ghostsRemoved": 0]])
        names = Set(try await bench.entries("Accounts", down).compactMap { $0["Name"]?.stringValue })
        #expect(names == ["L2", "L3"])

        try await bench.client.delete("Account", id: try #require(ids["L3"]))
        let oneGone = try await bench.run(clean)
        #expect(oneGone.report.stages[0].byObject == ["Account": ["ghostsRemoved": 1]])
        names = Set(try await bench.entries("Accounts", down).compactMap { $0["Name"]?.stringValue })
        #expect(names == ["L2"], "L3 is gone from the org; L1, now in the query's answer, was never synced")
    }
}
