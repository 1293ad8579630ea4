import AcmeTargets
import Connectors
import Foundation
import JSON
import OrgEmulator
import Soups
import Stages
import Testing

/// The target end to end: an emulated org on a free port, a store in a temporary folder, and a
/// pipeline that syncs local contacts up through CompositeKeySyncUpTarget.
@Suite struct CompositeKeySyncUpTargetTests {
    static let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../org/seed.json").standardizedFileURL.path

    static var registry: StageRegistry {
        var registry = StageRegistry.builtIn
        CompositeKeySyncUpTarget.register(in: &registry)
        return registry
    }

    /// An observer that keeps nothing.
    struct Silent: RunObserver {
        func handle(_ event: RunEvent, at date: Date) {}
    }

    static func pipeline(_ target: String, in directory: String, org: RunningOrgEmulator, token: String) throws -> PipelineDefinition {
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "org": { "instanceUrl": "\(org.instanceURL)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "store": "store.sqlite",
              "soups": [ { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "__local__", "type": "string" } ] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Contacts", "target": \(target) } ],
              "stages": [ { "id": "up", "type": "syncUp", "sync": "up" } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return try PipelineLoader(registry: registry, variables: VariableResolver(variables: ["TOKEN": token])).load(path: path)
    }

    static func records(_ client: any OrgClient, _ soql: String) async throws -> [JSONObject] {
        var records: [JSONObject] = []
        for try await record in client.query(soql) { records.append(record) }
        return records
    }

    static func localContact(_ id: Int, _ first: String, _ last: String, _ email: String, _ title: String) -> JSONObject {
        ["attributes": ["type": "Contact"], "Id": .string("local_\(id)"), "FirstName": .string(first), "LastName": .string(last),
         "Email": .string(email), "Title": .string(title), "__local__": true, "__locally_created__": true,
         "__locally_updated__": false, "__locally_deleted__": false]
    }

    @Test func aContactTheOrgHoldsByItsKeyIsUpdatedNotCreatedTwice() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("acme-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let emulator = try OrgEmulator(configuration: .init(seedPath: Self.seed))
        let org = try await emulator.start()
        let settings = OrgConnectionSettings(instanceURL: org.instanceURL, auth: .accessToken(accessToken: emulator.accessToken))
        let client = try SalesforceClient(settings: settings)
        defer { Task { await client.shutdown(); await org.stop() } }

        let pipeline = try Self.pipeline(#"{ "iOSImpl": "CompositeKeySyncUpTarget", "keyFields": ["LastName", "Email"] }"#,
                                         in: directory, org: org, token: emulator.accessToken)
        let store = try SoupStore(path: pipeline.store)
        for soup in pipeline.soups { try await store.registerSoup(soup) }
        try await store.upsert([
            Self.localContact(1, "Wile", "Coyote", "wile@acme.example", "Chief Inventor"),  // in the seed
            Self.localContact(2, "Daffy", "Duck", "daffy@acme.example", "Spokesduck"),
        ], into: "Contacts")
        try store.close()
        let seeded = try await Self.records(client, "SELECT Id FROM Contact WHERE Email = 'wile@acme.example'")

        // The run connects (and disconnects) a client of its own.
        let connector: OrgConnector = { _ in try SalesforceClient(settings: settings) }
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: Silent(), orgConnector: connector).run()

        #expect(outcome.report.exitCode == 0)
        #expect(outcome.report.stages[0].counts["created"] == 2)
        let coyotes = try await Self.records(client, "SELECT Id, Title FROM Contact WHERE Email = 'wile@acme.example'")
        #expect(coyotes.count == 1, "updated, not created a second time")
        #expect(coyotes.first?["Id"] == seeded.first?["Id"])
        #expect(coyotes.first?["Title"] == "Chief Inventor")
        #expect(try await Self.records(client, "SELECT Id FROM Contact WHERE Email = 'daffy@acme.example'").count == 1)

        let reopened = try SoupStore(path: pipeline.store)
        defer { try? reopened.close() }
        let entries = try await reopened.entries(in: "Contacts", limit: 10)
        #expect(entries.allSatisfy { !$0.isDirty })
        #expect(entries.contains { $0["Id"] == seeded.first?["Id"] }, "the local entry took the org's record id")
    }

    @Test func keyFieldsAreRequiredAtValidateTime() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("acme-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "soups": [ { "soupName": "Contacts", "indexes": [] } ],
              "syncs": [ { "syncName": "up", "syncType": "syncUp", "soupName": "Contacts", "target": { "iOSImpl": "CompositeKeySyncUpTarget" } } ],
              "stages": [ { "id": "up", "type": "syncUp", "sync": "up" } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: PipelineValidationError.self) {
            try PipelineLoader(registry: Self.registry, variables: VariableResolver(variables: [:])).load(path: path)
        }
    }
}
