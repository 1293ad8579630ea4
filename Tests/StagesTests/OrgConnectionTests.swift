import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Stages
import Synchronization
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

/// A test stage that declares writes to the org (so a run connects before any stage starts) and
/// writes nothing.
struct DeclaresOrgWritesStage: Stage {
    static let typeName = "test.writesToOrg"
    static let countKeys: [String] = []
    static let writesToOrg = true

    init(settings: StageSettings) throws {}

    func run(in context: StageContext) async throws -> StageResult { StageResult() }
}

/// The real client, telling when it is shut down.
struct ShutdownWatchingClient: OrgClient {
    let base: SalesforceClient
    let onShutdown: @Sendable () -> Void

    var instanceURL: String { get async throws { try await base.instanceURL } }
    var apiPath: String { base.apiPath }
    func send(_ request: OrgRequest) async throws -> OrgResponse { try await base.send(request) }
    func usage() async -> APIUsage { await base.usage() }
    func describe(_ type: String) async throws -> JSONObject { try await base.describe(type) }
    func shutdown() async {
        onShutdown()
        await base.shutdown()
    }
}

@Suite struct OrgConnectionTests {
    /// A run connects while its store opens; when the run cannot start (its store cannot be
    /// opened, or `--only` picks a stage whose input the store does not hold), a connection it
    /// opened is let go before the run gives up.
    @Test(arguments: [true, false]) func aRunThatCannotStartLetsItsOrgConnectionGo(storeIsBroken: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var registry = testRegistry
        registry.register(DeclaresOrgWritesStage.self)
        if storeIsBroken {
            try "not a database".write(toFile: (directory as NSString).appendingPathComponent("store.sqlite"), atomically: true, encoding: .utf8)
        }
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "org": { "instanceUrl": "https://example.invalid", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "store": "store.sqlite", "stages": [ { "id": "read", "type": "test.count", "count": 1 },
                                                   { "id": "write", "type": "test.writesToOrg", "from": "read" } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: registry, variables: VariableResolver(variables: ["TOKEN": "t"])).load(path: path)
        // The client is made, not connected: no org needs to answer.
        let connects = Mutex(0)
        let shutdowns = Mutex(0)
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            connects.withLock { $0 += 1 }
            let client = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
            return ShutdownWatchingClient(base: client) { shutdowns.withLock { $0 += 1 } }
        }
        var options = RunOptions()
        options.only = storeIsBroken ? [] : ["write"]
        do {
            _ = try await PipelineRunner(pipeline: pipeline, options: options, observer: RecordingObserver(), orgConnector: connector).run()
            Issue.record("the run cannot start")
        } catch {
            #expect(error.description.contains(storeIsBroken ? "store.sqlite" : "--only write"), "\(error)")
        }
        // Connected (the store took long enough) and let go, or stopped before connecting.
        let (opened, closed) = (connects.withLock { $0 }, shutdowns.withLock { $0 })
        #expect(opened <= 1 && closed == opened, "\(opened) connection(s), \(closed) let go")
    }

    @Test func stagesReachTheOrgLazilyAndTheReportCountsRequests() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let org = try await TestOrg.start()
        defer { Task { await org.stop() } }
        let url = org.instanceURL

        var registry = testRegistry
        registry.register(CountAccountsStage.self)
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "org": { "instanceUrl": "\(url)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "stages": [ { "id": "count", "type": "test.countAccounts" }, { "id": "offline", "type": "test.count", "count": 1 } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: registry, variables: VariableResolver(variables: ["TOKEN": org.accessToken])).load(path: path)
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
        #expect(!log.contains(org.accessToken))
    }

    /// A run that cannot start stops a connection still being opened, and opens none after.
    @Test func aRunThatCannotStartStopsItsOrgConnectionBeingOpened() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var registry = testRegistry
        registry.register(DeclaresOrgWritesStage.self)
        try "not a database".write(toFile: (directory as NSString).appendingPathComponent("store.sqlite"), atomically: true, encoding: .utf8)
        let path = (directory as NSString).appendingPathComponent("pipeline.json")
        try """
            { "org": { "instanceUrl": "https://example.invalid", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "store": "store.sqlite", "stages": [ { "id": "write", "type": "test.writesToOrg" } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: registry, variables: VariableResolver(variables: ["TOKEN": "t"])).load(path: path)
        // A connection that would take a minute to open, unless cancelled.
        let connected = Mutex(false)
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            try await Task.sleep(for: .seconds(60))
            connected.withLock { $0 = true }
            return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
        }
        await #expect(throws: PipelineRunner.SetupError.self) {
            _ = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver(), orgConnector: connector).run()
        }
        #expect(!connected.withLock { $0 }, "the connection was stopped, or never began")
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
