import Connectors
import Foundation
import JSON
import OrgEmulator
import Stages
import Testing

/// A test stage that counts the org's Accounts through `context.org()`.
struct CountAccountsStage: Stage {
    static let typeName = "test.countAccounts"
    static let countKeys = [StageCounts.read]

    init(settings: StageSettings) throws {}

    func run(in context: StageContext) async throws -> StageResult {
        let org = try await context.org()
        let page = try await org.send(OrgRequest(method: "GET", path: "/services/data/v62.0/query",
                                                 query: [("q", "SELECT COUNT() FROM Account")], kind: "query")).json()
        var result = StageResult()
        result.add(StageCounts.read, Int(page["totalSize"]?.integerValue ?? 0), object: "Account")
        return result
    }
}

@Suite struct OrgConnectionTests {
    @Test func stagesReachTheOrgLazilyAndTheReportCountsRequests() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../samples/org/seed.json").standardizedFileURL.path
        let emulator = try OrgEmulator(configuration: .init(seedPath: seed))
        let running = try await emulator.start()
        defer { Task { await running.stop() } }
        let url = running.instanceURL

        var registry = testRegistry
        registry.register(CountAccountsStage.self)
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "org": { "instanceUrl": "\(url)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "stages": [ { "id": "count", "type": "test.countAccounts" }, { "id": "offline", "type": "test.count", "count": 1 } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: registry, variables: VariableResolver(variables: ["TOKEN": emulator.accessToken])).load(path: path)
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
        }
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver(), orgConnector: connector).run()
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages.first { $0.id == "count" }?.counts["read"] == 3)
        #expect(outcome.report.api.requests == 1)
        #expect(outcome.report.api.byKind == ["query": 1])
        #expect(outcome.report.api.limitInfo == "api-usage=1/15000")
        let json = try JSONParser.parse(String(contentsOfFile: outcome.report.reportDir + "/report.json", encoding: .utf8))
        #expect(json["api"]?["requests"] == 1)
        // The token is a secret: it appears nowhere in the run's log.
        let log = try String(contentsOfFile: outcome.report.reportDir + "/run.log", encoding: .utf8)
        #expect(!log.contains(emulator.accessToken))
    }

    @Test func aStageNeedingAnOrgFailsClearlyWithoutOne() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var registry = testRegistry
        registry.register(CountAccountsStage.self)
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try #"{ "stages": [ { "id": "count", "type": "test.countAccounts" } ] }"#.write(toFile: path, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: registry, variables: VariableResolver(variables: [:])).load(path: path)
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        #expect(outcome.exitCode == 2)
        #expect(outcome.report.error == "this stage needs an org, and the pipeline declares no \"org\"")
    }
}
