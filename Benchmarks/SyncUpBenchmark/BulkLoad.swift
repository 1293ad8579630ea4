import Connectors
import Foundation
import JSON
import OrgEmulator
import Soups
import Stages

/// A flat sync up of `records` new Accounts through Bulk API 2.0 (`strategy: bulk`): requests, ingest
/// jobs and wall time, with the client's and the emulator's CPU together (they share the process).
enum BulkLoad {
    static func measure(records: Int, seed: String) async throws -> (requests: Int, polls: Int, jobs: Int, milliseconds: Double, created: Int) {
        let folder = NSTemporaryDirectory() + "syncup-benchmark-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let emulator = try OrgEmulator(configuration: .init(databasePath: folder + "/org.sqlite", seedPath: seed))
        let running = try await emulator.start()
        defer { Task { await running.stop() } }
        let pipelinePath = folder + "/pipeline.json"
        try """
            { "name": "bulk", "org": { "instanceUrl": "\(running.instanceURL)", "maxInFlight": 8,
                                       "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "store": "store.sqlite",
              "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "__local__", "type": "string" } ] } ],
              "syncs": [ { "syncName": "flat", "syncType": "syncUp", "soupName": "Accounts",
                           "target": { "createFieldlist": ["Name", "Industry"] } } ],
              "stages": [ { "id": "up", "type": "syncUp", "sync": "flat", "strategy": "bulk" } ] }
            """.write(toFile: pipelinePath, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: .builtIn, variables: VariableResolver(variables: ["TOKEN": emulator.accessToken])).load(path: pipelinePath)
        let store = try SoupStore(path: pipeline.store)
        for soup in pipeline.soups { try await store.registerSoup(soup) }
        for start in stride(from: 0, to: records, by: 50_000) {
            try await store.upsert((start..<min(records, start + 50_000)).map {
                local("Account", "local_b\($0)", ["Name": .string("Bulk account \($0)"), "Industry": "Energy"])
            }, into: "Accounts")
        }
        try store.close()
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, maxInFlight: settings.maxInFlight ?? 8, auth: settings.auth))
        }
        let start = ContinuousClock.now
        let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(reportDirectory: folder + "/report"), observer: QuietObserver(),
                                               orgConnector: connector).run()
        let elapsed = ContinuousClock.now - start
        guard outcome.exitCode == 0 else { throw StageFailure(.failed, "the bulk run ended with exit code \(outcome.exitCode): \(outcome.report.error ?? "")") }
        let jobs = try await emulatorJobCount(running.instanceURL, token: emulator.accessToken)
        let polls = outcome.report.api.byKind["bulkStatus"] ?? 0
        return (outcome.report.api.requests - polls, polls, jobs, Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15,
                outcome.report.stages[0].counts["created"] ?? 0)
    }

    /// The ingest jobs the emulator holds.
    static func emulatorJobCount(_ instanceURL: String, token: String) async throws -> Int {
        let client = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: instanceURL, auth: .accessToken(accessToken: token)))
        defer { Task { await client.shutdown() } }
        let list = try await client.send(OrgRequest(method: "GET", path: client.apiPath + "/jobs/ingest", kind: "bulk")).json()
        return list["records"]?.arrayValue?.count ?? 0
    }
}
