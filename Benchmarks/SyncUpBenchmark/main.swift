// SyncUpBenchmark: syncs up N new trees of 1 Account + 5 Contacts (default 1,000) through each
// strategy, against an in-process emulator with 0 and 50 ms injected latency per request, and
// prints API requests and wall time per strategy, and the speed-up of the default over perTree.
//
//   swift run -c release SyncUpBenchmark [--trees N] [--smoke]
//   swift run -c release SyncUpBenchmark --graph [--trees N]   # the graph load against three syncs
//   swift run -c release SyncUpBenchmark --bulk N              # N flat Accounts through Bulk API 2.0
//   swift run -c release SyncUpBenchmark --lookups N           # N rows staged with two lookups, beside ids in the file

import CJemalloc
import Connectors
import Foundation
import JSON
import OrgEmulator
import Soups
import Stages

// jemalloc is linked (`import CJemalloc`) as in `pipeline`, so the figures are the product's.

var trees = 1_000
var latencies = [0, 50]
var graphLoad = false
var bulkRecords: Int?
var lookupRows: Int?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--trees": trees = Int(arguments.next() ?? "") ?? trees
    case "--smoke": (trees, latencies) = (20, [0, 5])
    case "--graph": graphLoad = true
    case "--bulk": bulkRecords = Int(arguments.next() ?? "") ?? 100_000
    case "--lookups": lookupRows = Int(arguments.next() ?? "") ?? 200_000
    default:
        FileHandle.standardError.write(Data("usage: SyncUpBenchmark [--trees N] [--smoke] [--graph] [--bulk N] [--lookups N]\n".utf8))
        exit(2)
    }
}

let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../samples/org/seed.json").standardizedFileURL.path

/// Discards run events.
struct QuietObserver: RunObserver {
    func handle(_ event: RunEvent, at date: Date) {}
}

/// One sync up of `trees` new trees through `strategy`; returns (requests, milliseconds, created).
func measure(strategy: String, latencyMs: Int) async throws -> (requests: Int, milliseconds: Double, created: Int) {
    let folder = NSTemporaryDirectory() + "syncup-benchmark-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let emulator = try OrgEmulator(configuration: .init(databasePath: folder + "/org.sqlite", seedPath: seed))
    let running = try await emulator.start()
    defer { Task { await running.stop() } }
    let pipelinePath = folder + "/pipeline.json"
    try """
        { "name": "bench", "org": { "instanceUrl": "\(running.instanceURL)", "maxInFlight": 8,
                                    "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
          "store": "store.sqlite",
          "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "__local__", "type": "string" } ] },
                     { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                            { "path": "__local__", "type": "string" } ] } ],
          "syncs": [ { "syncName": "trees", "syncType": "syncUp", "soupName": "Accounts",
                       "target": { "type": "parent_children", "relationshipType": "MASTER_DETAIL",
                                   "parent": { "sobjectType": "Account", "soupName": "Accounts" },
                                   "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts",
                                                 "parentIdFieldName": "AccountId" },
                                   "createFieldlist": ["Name"], "childrenCreateFieldlist": ["LastName", "AccountId"] } } ],
          "stages": [ { "id": "up", "type": "syncUp", "sync": "trees", "strategy": "\(strategy)" } ] }
        """.write(toFile: pipelinePath, atomically: true, encoding: .utf8)
    let pipeline = try PipelineLoader(registry: .builtIn, variables: VariableResolver(variables: ["TOKEN": emulator.accessToken])).load(path: pipelinePath)
    let store = try SoupStore(path: pipeline.store)
    for soup in pipeline.soups { try await store.registerSoup(soup) }
    try await store.upsert((0..<trees).map { local("Account", "local_a\($0)", ["Name": .string("Account \($0)")]) }, into: "Accounts")
    try await store.upsert((0..<trees).flatMap { tree in
        (0..<5).map { local("Contact", "local_c\(tree)_\($0)", ["LastName": .string("Contact \(tree)-\($0)"), "AccountId": .string("local_a\(tree)")]) }
    }, into: "Contacts")
    try store.close()

    let admin = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: running.instanceURL, auth: .accessToken(accessToken: emulator.accessToken)))
    _ = try await admin.send(.json("POST", "/emulator/faults", ["latencyMs": .integer(Int64(latencyMs))], kind: "admin"))
    await admin.shutdown()

    let connector: OrgConnector = { configuration in
        guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
        return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, maxInFlight: settings.maxInFlight ?? 8, auth: settings.auth))
    }
    let start = ContinuousClock.now
    let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(reportDirectory: folder + "/report"), observer: QuietObserver(),
                                           orgConnector: connector).run()
    let elapsed = ContinuousClock.now - start
    guard outcome.exitCode == 0 else { throw StageFailure(.failed, "the \(strategy) run ended with exit code \(outcome.exitCode): \(outcome.report.error ?? "")") }
    let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    if ProcessInfo.processInfo.environment["BENCH_KINDS"] != nil { print(strategy, outcome.report.api.byKind) }
    return (outcome.report.api.requests, milliseconds, outcome.report.stages[0].counts["created"] ?? 0)
}

if let lookupRows {
    print("lookups: \(lookupRows) rows staged with OwnerId and RecordTypeId looked up, beside the same rows with the ids in the file")
    let figures = try await LookupLoad.measure(rows: lookupRows, seed: seed)
    print(String(format: "  lookups: best against best: %.2f× (bar: 1.10×), %d queries a load", figures.ratio, figures.queries))
    exit(0)
}

if let bulkRecords {
    let figures = try await BulkLoad.measure(records: bulkRecords, seed: seed)
    print(String(format: "bulk: %d new Accounts through Bulk API 2.0: %d requests besides %d status polls, %d ingest jobs, %.1f s, %.0f records/s, %d created",
                 bulkRecords, figures.requests, figures.polls, figures.jobs, figures.milliseconds / 1000, Double(bulkRecords) / figures.milliseconds * 1000, figures.created))
    exit(figures.created == bulkRecords ? 0 : 1)
}

if graphLoad {
    print("graph load: \(trees) Accounts (a tenth under another), 5 Contacts each, 2 Cases per Contact; maxInFlight 8")
    print("how                      requests   wall ms   records created / updated")
    for graph in [true, false] {
        let figures = try await GraphLoad.measure(accounts: trees, graph: graph, seed: seed)
        print(String(format: "%@ %8d %9.0f   %d / %d", (graph ? "one graph sync" : "three separate syncs").padding(toLength: 24, withPad: " ", startingAt: 0),
                     figures.requests, figures.milliseconds, figures.created, figures.updated))
    }
    exit(0)
}

print("sync up of \(trees) new trees (1 Account + 5 Contacts each), maxInFlight 8")
print("latency  strategy      requests   wall ms   records/s")
for latency in latencies {
    var wall: [String: Double] = [:]
    for strategy in ["auto", "composite", "graph", "perTree"] {
        let result = try await measure(strategy: strategy, latencyMs: latency)
        guard result.created == trees * 6 else {
            FileHandle.standardError.write(Data("\(strategy): created \(result.created) of \(trees * 6) records\n".utf8))
            exit(1)
        }
        wall[strategy] = result.milliseconds
        print(String(format: "%4d ms  %@ %8d %9.0f %11.0f", latency, strategy.padding(toLength: 12, withPad: " ", startingAt: 0), result.requests, result.milliseconds,
                     Double(trees * 6) / result.milliseconds * 1000))
    }
    print(String(format: "%4d ms  default (auto) is %.1fx faster than perTree", latency, (wall["perTree"] ?? 0) / max(1, wall["auto"] ?? 1)))
}
