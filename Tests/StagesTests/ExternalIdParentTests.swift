import Foundation
import JSON
import Soups
import Stages
import Testing

/// Parents named by an external id (SPEC §3c): `Account.External_Id__c` in a field list, or a key
/// so spelled in the record, is sent as the org resolves it at write time in every transport; the
/// org's refusal (no such parent, several) fails that record alone; a dry run checks the keys.
@Suite struct ExternalIdParentTests {
    static let sync = """
        [ { "syncName": "contacts", "syncType": "syncUp", "soupName": "Contacts",
            "target": { "createFieldlist": ["LastName", "Account.External_Id__c"] }, "options": { "mergeMode": "OVERWRITE" } } ]
        """

    /// Three contacts under ACME-1, one under GLOBEX-1 (nested, as a sync down leaves it), and one
    /// under a key the org does not hold.
    static func contacts() -> [JSONObject] {
        (1...3).map { SyncHarness.local("Contact", "local_c\($0)", ["LastName": .string("Acme \($0)"), "Account.External_Id__c": "ACME-1"]) }
            + [SyncHarness.local("Contact", "local_c4", ["LastName": "Globex", "Account": ["External_Id__c": "globex-1"]]),
               SyncHarness.local("Contact", "local_c5", ["LastName": "Nowhere", "Account.External_Id__c": "NO-SUCH-KEY"])]
    }

    @Test(arguments: ["collections", "composite", "graph", "bulk", "perTree", "rest"])
    func parentsByExternalIdInEveryTransport(strategy: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: #"[ { "id": "up", "type": "syncUp", "sync": "contacts", "strategy": "\#(strategy)" } ]"#)
        try await bench.put(Self.contacts(), into: "Contacts", pipeline)
        let queriesBefore = await bench.stats()["requests"]?["byKind"]?["query"]?.integerValue ?? 0
        let run = try await bench.run(pipeline)
        let queriesAfter = await bench.stats()["requests"]?["byKind"]?["query"]?.integerValue ?? 0
        let stage = run.report.stages[0]
        #expect(run.exitCode == 3 && stage.counts["created"] == 4 && stage.counts["failed"] == 1, "\(strategy): \(stage)")
        let acme = try await bench.query("SELECT Id FROM Account WHERE External_Id__c = 'ACME-1'").first?["Id"]
        let globex = try await bench.query("SELECT Id FROM Account WHERE External_Id__c = 'GLOBEX-1'").first?["Id"]
        let created = try await bench.query("SELECT LastName, AccountId FROM Contact WHERE LastName LIKE 'Acme %' OR LastName = 'Globex' OR LastName = 'Nowhere'")
        #expect(created.count == 4, "\(strategy): \(created)")
        for contact in created {
            #expect(contact["AccountId"] == (contact["LastName"] == "Globex" ? globex : acme), "\(strategy): \(contact)")
        }
        // The parent is the org's to find: no query was made for it.
        #expect(queriesAfter == queriesBefore, "\(strategy): \(queriesAfter - queriesBefore) queries")
        let failed = try await bench.entries("Contacts", pipeline).first { $0["LastName"] == "Nowhere" }
        #expect(failed?.isDirty == true && failed?.lastErrorCode == "INVALID_FIELD", "\(strategy): \(failed ?? [:])")
        #expect(failed?[SyncField.lastError]?.stringValue?.contains("Foreign key external ID: NO-SUCH-KEY not found for field External_Id__c in entity Account") == true,
                "\(strategy): \(failed?[SyncField.lastError] ?? .null)")
    }

    @Test func aDryRunChecksTheKeysInOneQueryAndWritesNothing() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.sync, stages: #"[ { "id": "up", "type": "syncUp", "sync": "contacts" } ]"#)
        try await bench.put(Self.contacts(), into: "Contacts", pipeline)
        let before = await bench.stats()
        let run = try await bench.run(pipeline, dryRun: true)
        let after = await bench.stats()
        let stage = run.report.stages[0]
        #expect(stage.counts["rejected"] == 1, "\(stage)")
        #expect(after["requests"]?["writes"] == before["requests"]?["writes"], "a dry run writes nothing")
        let queries = (after["requests"]?["byKind"]?["query"]?.integerValue ?? 0) - (before["requests"]?["byKind"]?["query"]?.integerValue ?? 0)
        #expect(queries == 1, "the page's keys in one query: \(queries)")
        let rejects = try String(contentsOfFile: run.report.reportDir + "/Contact-plan.csv", encoding: .utf8)
        #expect(rejects.contains("Foreign key external ID: NO-SUCH-KEY not found"), "\(rejects)")
    }

    /// A graph that upserts accounts by a new external id, and creates contacts naming them by
    /// it: the dry run counts the planned accounts as there (no refusal), the live run creates both
    /// — accounts first, in whichever order the objects are listed.
    @Test(arguments: [false, true])
    func aParentPlannedByUpsertInTheSameRun(contactsListedFirst: Bool) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let objects = [
            #"{ "soupName": "Accounts", "sobjectType": "Account", "externalIdFieldName": "External_Id__c", "createFieldlist": ["Name", "External_Id__c"] }"#,
            #"{ "soupName": "Contacts", "sobjectType": "Contact", "createFieldlist": ["LastName", "Account.External_Id__c"] }"#]
        let sync = """
            [ { "syncName": "load", "syncType": "syncUp",
                "target": { "type": "graph", "objects": [ \((contactsListedFirst ? objects.reversed() : objects).joined(separator: ", ")) ] } } ]
            """
        let pipeline = try bench.pipeline(syncs: sync, stages: #"[ { "id": "up", "type": "syncUp", "sync": "load" } ]"#)
        try await bench.put([SyncHarness.local("Account", "local_new", ["Name": "Newco", "External_Id__c": "NEW-1"])], into: "Accounts", pipeline)
        try await bench.put([SyncHarness.local("Contact", "local_k1", ["LastName": "Known", "Account.External_Id__c": "NEW-1"]),
                             SyncHarness.local("Contact", "local_k2", ["LastName": "Lost", "Account.External_Id__c": "NEW-404"])], into: "Contacts", pipeline)
        let plan = try await bench.run(pipeline, dryRun: true)
        #expect(plan.report.stages[0].counts["rejected"] == 1, "only the contact under a key nobody holds: \(plan.report.stages[0])")
        let planCSV = try String(contentsOfFile: plan.report.reportDir + "/Contact-plan.csv", encoding: .utf8)
        #expect(planCSV.contains("NEW-404 not found") && !planCSV.contains("NEW-1 not found"), "\(planCSV)")
        let run = try await bench.run(pipeline)
        #expect(run.report.stages[0].counts["created"] == 2 && run.report.stages[0].counts["failed"] == 1, "\(run.report.stages[0])")
        let newco = try await bench.query("SELECT Id FROM Account WHERE External_Id__c = 'NEW-1'").first?["Id"]
        let known = try await bench.query("SELECT AccountId FROM Contact WHERE LastName = 'Known'").first
        #expect(newco != nil && known?["AccountId"] == newco)
    }

    @Test func aKeyFieldThatIsNoExternalIdIsRefused() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let sync = Self.sync.replacingOccurrences(of: "Account.External_Id__c", with: "Account.Name")
        let pipeline = try bench.pipeline(syncs: sync, stages: #"[ { "id": "up", "type": "syncUp", "sync": "contacts" } ]"#)
        try await bench.put([SyncHarness.local("Contact", "local_n", ["LastName": "ByName", "Account.Name": "Globex"])], into: "Contacts", pipeline)
        let run = try await bench.run(pipeline)
        let entry = try await bench.entries("Contacts", pipeline).first
        #expect(run.exitCode == 3 && entry?.lastErrorCode == "INVALID_FIELD", "\(run.report.stages[0])")
        #expect(entry?[SyncField.lastError]?.stringValue?.contains("Provided external ID field does not exist or is not accessible: Name") == true)
    }
}
