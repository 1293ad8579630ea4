import Connectors
import Foundation
import JSON
import Soups
import Stages
import Synchronization
import Testing

/// Sync targets selected by name from the registry, and Mobile SDK's custom sync-up target:
/// `createOnServer` / `updateOnServer` / `deleteOnServer` with the journal, reports and dry run of
/// the built-in targets.
@Suite struct SyncTargetRegistryTests {
    /// Counts the calls a target's methods receive.
    final class Calls: Sendable {
        let creates = Mutex(0)
        var count: Int { creates.withLock { $0 } }
    }

    /// Overrides `createOnServer` only: sets a Description; optionally loses the first answer.
    struct DescribedAccounts: SingleSoupSyncUpTarget, SyncUpRecordWriter {
        var soupName: String
        var calls: Calls
        var loseFirstAnswer = false
        var createFieldlist: [String]? { ["Name"] }
        var updateFieldlist: [String]? { ["Name"] }

        func createOnServer(_ objectType: String, fields: JSONObject, org: any OrgClient) async throws -> String {
            let call = calls.creates.withLock { count in
                count += 1
                return count
            }
            var fields = fields
            fields["Description"] = "created by DescribedAccounts"
            let id = try await org.create(objectType, fields)
            if loseFirstAnswer && call == 1 { throw OrgClientError.uncertain("the answer was lost") }
            return id
        }
    }

    /// Never lets the local copy win (LEAVE_IF_CHANGED then always finds a conflict).
    struct NeverNewer: SingleSoupSyncUpTarget {
        var soupName: String
        func isNewerThanServer(_ record: SyncUpRecord, serverModificationDate: Int64?) -> Bool { false }
    }

    static func registry(_ calls: Calls, loseFirstAnswer: Bool = false) -> StageRegistry {
        var registry = testRegistry
        registry.register(syncUpTarget: ["DescribedAccounts"]) { sync, _ in
            DescribedAccounts(soupName: sync.soupName, calls: calls, loseFirstAnswer: loseFirstAnswer)
        }
        registry.register(syncUpTarget: ["NeverNewer"]) { sync, _ in NeverNewer(soupName: sync.soupName) }
        return registry
    }

    static func sync(_ impl: String, mergeMode: String = "OVERWRITE") -> String {
        #"[ { "syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": { "iOSImpl": "\#(impl)" }, "options": { "mergeMode": "\#(mergeMode)" } } ]"#
    }

    static let stages = #"[ { "id": "up", "type": "syncUp", "sync": "up" } ]"#

    @Test func aTargetOverridingOnlyCreateOnServerSyncsThroughThePipeline() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let calls = Calls()
        let pipeline = try bench.pipeline(syncs: Self.sync("com.acme.sync.DescribedAccounts"), stages: Self.stages,
                                          registry: Self.registry(calls))
        let existing = try await bench.serverRecord("Account", ["Name": "Renamed later"])
        try await bench.put([
            SyncHarness.local("Account", "local_1", ["Name": "Target one"]),
            SyncHarness.local("Account", "local_2", ["Name": "Target two"]),
            SyncHarness.flagged(existing, SyncField.locallyUpdated, ["Name": "Renamed"]),
        ], into: "Accounts", pipeline)

        let dry = try await bench.run(pipeline, dryRun: true)
        #expect(dry.exitCode == 0)
        #expect(calls.count == 0, "a dry run calls none of the target's methods")

        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["created"] == 2)
        #expect(outcome.report.stages[0].counts["updated"] == 1)
        #expect(calls.count == 2)
        let created = try await bench.query("SELECT Name, Description FROM Account WHERE Name LIKE 'Target %' ORDER BY Name")
        #expect(created.map { $0["Description"] } == ["created by DescribedAccounts", "created by DescribedAccounts"])
        // updateOnServer kept its default: the REST update.
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(existing["Id"]!.stringValue!)'").first?["Name"] == "Renamed")
        #expect(try await bench.entries("Accounts", pipeline).allSatisfy { !$0.isDirty })
    }

    @Test func aCustomCreateWhoseAnswerIsLostIsFoundNotSentAgain() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let calls = Calls()
        let pipeline = try bench.pipeline(syncs: Self.sync("DescribedAccounts"), stages: Self.stages,
                                          registry: Self.registry(calls, loseFirstAnswer: true))
        try await bench.put([SyncHarness.local("Account", "local_1", ["Name": "Lost answer"])], into: "Accounts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages[0])")
        #expect(outcome.report.stages[0].counts["created"] == 1)
        #expect(calls.count == 1, "found in the org by the journal, not created again")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name = 'Lost answer'").count == 1)
        let entry = try #require(try await bench.entries("Accounts", pipeline).first { $0["Name"] == "Lost answer" })
        #expect(!entry.isDirty && !SyncField.isLocalId(entry["Id"]?.stringValue ?? "local_"))
    }

    /// Under LEAVE_IF_CHANGED the records a target's own `createOnServer` wrote are read back, not
    /// held as created (it may have matched a record rather than created one); so is one whose
    /// answer was lost and that the journal found.
    @Test(arguments: [false, true]) func recordsATargetWritesItselfAreReadBack(loseFirstAnswer: Bool) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync("DescribedAccounts", mergeMode: "LEAVE_IF_CHANGED"), stages: Self.stages,
                                          registry: Self.registry(Calls(), loseFirstAnswer: loseFirstAnswer))
        try await bench.put([SyncHarness.local("Account", "local_1", ["Name": "Written by the target"])], into: "Accounts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.exitCode == 0 && outcome.report.stages[0].counts["created"] == 1, "\(outcome.report.stages[0])")
        let entry = try #require(try await bench.entries("Accounts", pipeline).first)
        let server = try await bench.query("SELECT LastModifiedDate FROM Account WHERE Id = '\(entry["Id"]?.stringValue ?? "")'")
        #expect(!entry.isDirty && !entry.isAsCreated(dateField: "LastModifiedDate"))
        if !loseFirstAnswer {
            #expect(entry["LastModifiedDate"] != nil && entry["LastModifiedDate"] == server.first?["LastModifiedDate"], "\(entry)")
        }
    }

    @Test func isNewerThanServerDecidesLeaveIfChanged() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync("NeverNewer", mergeMode: "LEAVE_IF_CHANGED"), stages: Self.stages,
                                          registry: Self.registry(Calls()))
        let existing = try await bench.serverRecord("Account", ["Name": "Left alone"])
        try await bench.put([SyncHarness.flagged(existing, SyncField.locallyUpdated, ["Name": "Changed here"])],
                            into: "Accounts", pipeline)
        let outcome = try await bench.run(pipeline)
        #expect(outcome.report.stages[0].counts["conflicts"] == 1)
        #expect(try await bench.query("SELECT Name FROM Account WHERE Id = '\(existing["Id"]!.stringValue!)'").first?["Name"] == "Left alone")
    }

    @Test func anUnregisteredTargetIsAValidationErrorNotAFallback() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "soups": [ { "soupName": "S", "indexes": [] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "S", "target": { "iOSImpl": "AcmeSyncUpTarget" } },
                         { "syncName": "down", "syncType": "syncDown", "soupName": "S", "target": { "type": "sosl", "query": "FIND {x}" } },
                         { "syncName": "none", "syncType": "syncDown", "soupName": "S", "target": { "query": "SELECT Id FROM Account" } } ],
              "stages": [] }
            """, in: directory)
        #expect(errors.contains { $0.hasSuffix(#"syncs[0].target.iOSImpl: no sync-up target named "AcmeSyncUpTarget" is registered (registered: batch, collection, graph, parent_children, rest, and Mobile SDK's class names for them)"#) })
        #expect(errors.contains { $0.hasSuffix(#"syncs[1].target.type: no sync-down target named "sosl" is registered (registered: parent_children, soql, and Mobile SDK's class names for them)"#) })
        #expect(errors.contains { $0.hasSuffix("syncs[2].target.type: is required: the sync-down target to use (registered: parent_children, soql)") })
    }

    @Test func aTargetWritingItsOwnRecordsTakesNoPackedStrategy() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "soups": [ { "soupName": "Accounts", "indexes": [] } ], "syncs": \(Self.sync("DescribedAccounts")),
              "stages": [ { "id": "up", "type": "syncUp", "sync": "up", "strategy": "collections" } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try PipelineLoader(registry: Self.registry(Calls()), variables: VariableResolver(variables: [:])).load(path: path)
            Issue.record("expected a validation error")
        } catch {
            #expect(error.description.contains(#"stages[0].strategy: sync "up" uses a target that writes its records itself"#))
        }
    }

    /// Two parent-children syncs chained through a soup get a warning pointing at the graph target.
    @Test func chainedParentChildrenSyncsAreWarnedAbout() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "soups": [ { "soupName": "A", "indexes": [] }, { "soupName": "C", "indexes": [] }, { "soupName": "K", "indexes": [] } ],
              "syncs": [
                { "syncName": "accounts", "syncType": "syncUp", "soupName": "A", "target": { "type": "parent_children",
                  "parent": { "sobjectType": "Account", "soupName": "A" },
                  "children": { "sobjectType": "Contact", "soupName": "C", "parentIdFieldName": "AccountId" } } },
                { "syncName": "cases", "syncType": "syncUp", "soupName": "C", "target": { "type": "parent_children",
                  "parent": { "sobjectType": "Contact", "soupName": "C" },
                  "children": { "sobjectType": "Case", "soupName": "K", "parentIdFieldName": "ContactId" } } } ],
              "stages": [] }
            """, in: directory)
        #expect(pipeline.warnings.map { "\($0.location): \($0.message)" }.contains { message in
            message.hasPrefix("syncs[1].target.parent.soupName: C holds the children of sync \"accounts\"") && message.contains("\"type\": \"graph\"")
        })
    }
}
