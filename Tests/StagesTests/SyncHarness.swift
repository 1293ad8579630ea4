import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Soups
import Stages
import Testing

/// A sync test bench: an emulator (the sample seed) on its own port, a store in its own
/// folder with Account, Contact, Order and Order line soups, a client to look at the org, and a
/// runner for pipelines of sync-up stages.
final class SyncHarness: Sendable {
    static let seed = SampleOrg.seedPath

    static let soups = """
        [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" },
                                                 { "path": "ParentId", "type": "string" }, { "path": "__local__", "type": "string" } ] },
          { "soupName": "Tasks", "indexes": [ { "path": "Id", "type": "string" }, { "path": "WhatId", "type": "string" },
                                              { "path": "Subject", "type": "string" },
                                              { "path": "WhoId", "type": "string" }, { "path": "__local__", "type": "string" } ] },
          { "soupName": "Opportunities", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                      { "path": "Name", "type": "string" },
                                                      { "path": "__local__", "type": "string" } ] },
          { "soupName": "Cases", "indexes": [ { "path": "Id", "type": "string" }, { "path": "ContactId", "type": "string" },
                                              { "path": "Subject", "type": "string" },
                                              { "path": "AccountId", "type": "string" }, { "path": "__local__", "type": "string" } ] },
          { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                 { "path": "LastName", "type": "string" },
                                                 { "path": "__local__", "type": "string" } ] },
          { "soupName": "Orders", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" },
                                               { "path": "Primary_Line__c", "type": "string" },
                                               { "path": "Account__c", "type": "string" }, { "path": "__local__", "type": "string" } ] },
          { "soupName": "Lines", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Order__c", "type": "string" },
                                              { "path": "__local__", "type": "string" } ] } ]
        """

    let directory: String
    let org: TestOrg
    let client: SalesforceClient
    let observer = RecordingObserver()

    var token: String { org.accessToken }

    /// - Parameter requestDeadlineSeconds: how long the emulator lets a request run before stopping it unapplied.
    /// - Parameter seed: the seed file the emulator starts from (the sample org's by default).
    init(requestDeadlineSeconds: Double = 30, seed: String = SyncHarness.seed) async throws {
        directory = try makeTemporaryDirectory()
        org = try await TestOrg.start(seedPath: seed, requestDeadlineSeconds: requestDeadlineSeconds)
        client = try org.client(retry: RetryPolicy(), timeoutSeconds: 120)
    }

    /// Stops the emulator and the client, and removes the harness's folder.
    func close() async {
        await client.shutdown()
        await org.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The pipeline around `stages` with `syncs` (a JSON array).
    /// `org` adds settings to the org object (`"timeoutSeconds": 1, `).
    /// `refreshAuth` logs in with the seed user's refresh token (re-authenticating after a session expiry).
    func pipeline(syncs: String, stages: String, org: String = "", refreshAuth: Bool = false,
                  registry: StageRegistry = testRegistry, soups: String = SyncHarness.soups) throws -> PipelineDefinition {
        let auth = refreshAuth
            ? #""loginUrl": "\#(self.org.instanceURL)", "auth": { "flow": "refresh_token", "refreshToken": "${REFRESH}", "clientId": "demo-client", "clientSecret": "${SECRET}" }"#
            : #""auth": { "flow": "access_token", "accessToken": "${TOKEN}" }"#
        return try loadPipeline("""
            { "org": { \(org)"instanceUrl": "\(self.org.instanceURL)", \(auth) },
              "store": "store.sqlite", "soups": \(soups), "syncs": \(syncs), "stages": \(stages) }
            """, in: directory, variables: ["TOKEN": token, "REFRESH": "demo-refresh-token", "SECRET": "demo-secret"], registry: registry)
    }

    /// Runs the pipeline (optionally as a dry run).
    /// `answersOf` wraps the run's client (to hold answers back, say).
    func run(_ pipeline: PipelineDefinition, dryRun: Bool = false,
             answersOf wrap: @escaping @Sendable (SalesforceClient) -> any OrgClient = { $0 }) async throws -> RunOutcome {
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            var connection = settings.connectionSettings
            connection.loginURL = settings.loginUrl ?? settings.instanceUrl ?? ""
            connection.retry = RetryPolicy(maxAttempts: 5, baseDelaySeconds: 0.05, maxDelaySeconds: 0.5)
            return wrap(try SalesforceClient(settings: connection, clock: self.org.clock))
        }
        var options = RunOptions()
        options.dryRun = dryRun
        options.reportDirectory = (directory as NSString).appendingPathComponent("report-\(UUID().uuidString.prefix(6))")
        return try await PipelineRunner(pipeline: pipeline, options: options, observer: observer, orgConnector: connector).run()
    }

    /// Writes entries into a soup of the pipeline's store (registering the soups first).
    @discardableResult
    func put(_ entries: [JSONObject], into soup: String, _ pipeline: PipelineDefinition) async throws -> [JSONObject] {
        let store = try SoupStore(path: pipeline.store)
        for spec in pipeline.soups { try await store.registerSoup(spec) }
        let stored = try await store.upsert(entries, into: soup)
        try store.close()
        return stored
    }

    /// Every entry of a soup, by `_soupEntryId`.
    func entries(_ soup: String, _ pipeline: PipelineDefinition) async throws -> [JSONObject] {
        let store = try SoupStore.openForReading(path: pipeline.store)
        defer { try? store.close() }
        return try await store.entries(in: soup, limit: 100_000)
    }

    /// Records of the org, by a query.
    func query(_ soql: String) async throws -> [JSONObject] {
        var records: [JSONObject] = []
        for try await record in client.query(soql) { records.append(record) }
        return records
    }

    /// Creates a record in the org and returns it as a clean soup entry (as sync down leaves it).
    func serverRecord(_ type: String, _ fields: JSONObject) async throws -> JSONObject {
        let id = try await client.create(type, fields)
        var entry = try await client.retrieve(type, id: id, fields: ["Id", "LastModifiedDate"] + fields.keys)
        entry["attributes"] = ["type": .string(type)]
        entry.markClean()
        return entry
    }

    /// Moves the emulator's clock forward, and the clock of the runs' clients with it (org
    /// timestamps have whole seconds; requests held by latency finish, deadlines pass).
    func advanceClock(seconds: Int = 2) {
        org.advanceClock(seconds: seconds)
    }

    /// Lets `seconds` pass for a write the client gave up on: the org's clock and the client's
    /// move on, and the test waits until the org has finished every request it still held.
    func letTimePass(seconds: Int) async {
        org.advanceClock(seconds: seconds)
        await org.waitUntilIdle()
    }

    /// The emulator's counters (`/emulator/stats`): requests, writes, records by object.
    func stats() async -> JSONValue { await org.stats() }

    /// Sets the admin faults (see docs/emulator.md); `[:]` clears them.
    func setFaults(_ faults: JSONObject) async throws {
        try await org.setFaults(faults)
    }

    /// A locally created entry (`local_` id, `attributes.type`, flags).
    static func local(_ type: String, _ id: String, _ fields: JSONObject) -> JSONObject {
        var entry: JSONObject = ["attributes": ["type": .string(type)], "Id": .string(id)]
        for (key, value) in fields { entry[key] = value }
        entry[SyncField.local] = true
        entry[SyncField.locallyCreated] = true
        entry[SyncField.locallyUpdated] = false
        entry[SyncField.locallyDeleted] = false
        return entry
    }

    /// `entry` with a flag set (and `__local__`).
    static func flagged(_ entry: JSONObject, _ flag: String, _ changes: JSONObject = [:]) -> JSONObject {
        var copy = entry
        for (key, value) in changes { copy[key] = value }
        copy[flag] = true
        copy[SyncField.local] = true
        return copy
    }
}

extension JSONObject {
    /// The `__last_error__`'s error code, when there is one.
    var lastErrorCode: String? {
        guard let text = self[SyncField.lastError]?.stringValue else { return nil }
        return (try? JSONParser.parse(text))?["errorCode"]?.stringValue
    }
}
