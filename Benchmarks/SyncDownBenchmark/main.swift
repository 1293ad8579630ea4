// SyncDownBenchmark: seeds an in-process emulator with N accounts of 4 contacts each (default
// 20,000 × 5 = 100,000 records), fetches the sync's query raw (its pages read and dropped: the
// reference), then runs a parent-children syncDown of all of them into soups and prints
// records/second, the ratio to the raw fetch, and the peak resident memory of the syncing process.
// The emulator runs in a child process (this executable again, with `--serve`), so its memory is
// not counted.
//
//   swift run -c release SyncDownBenchmark [--parents N] [--smoke]

import CJemalloc
import Connectors
import Foundation
import JSON
import OrgEmulator
import Soups
import Stages

// jemalloc is linked (`import CJemalloc`) as in `pipeline`, so the figures are the product's.

let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../samples/org/seed.json").standardizedFileURL.path

var parents = 20_000
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--parents": parents = Int(arguments.next() ?? "") ?? parents
    case "--smoke": parents = 200
    case "--serve":
        // The child process: an emulator on the database given, its URL and token on one line.
        let emulator = try OrgEmulator(configuration: .init(databasePath: arguments.next() ?? "", seedPath: seed))
        let running = try await emulator.start()
        FileHandle.standardOutput.write(Data("\(running.instanceURL) \(emulator.accessToken)\n".utf8))
        while true { try await Task.sleep(for: .seconds(3600)) }
    default:
        FileHandle.standardError.write(Data("usage: SyncDownBenchmark [--parents N] [--smoke]\n".utf8))
        exit(2)
    }
}
let childrenPerParent = 4

/// Peak resident set size of this process so far, in MB.
func peakMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

struct QuietObserver: RunObserver {
    func handle(_ event: RunEvent, at date: Date) {}
}

let folder = NSTemporaryDirectory() + "syncdown-benchmark-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let server = Process()
server.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
server.arguments = ["--serve", folder + "/org.sqlite"]
let serverOutput = Pipe()
server.standardOutput = serverOutput
try server.run()
defer { server.terminate() }
var line = Data()
while true {
    let byte = serverOutput.fileHandleForReading.readData(ofLength: 1)
    if byte.isEmpty || byte == Data("\n".utf8) { break }
    line.append(byte)
}
let parts = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
guard parts.count == 2 else { FileHandle.standardError.write(Data("the emulator did not start\n".utf8)); exit(1) }
let (instanceURL, token) = (parts[0], parts[1])
let client = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: instanceURL, maxInFlight: 8, auth: .accessToken(accessToken: token)))

// Seeding (not timed): accounts, then their contacts, through sObject Collections.
var accountIds: [String] = []
try await withThrowingTaskGroup(of: [String].self) { group in
    for start in stride(from: 0, to: parents, by: 200) {
        group.addTask {
            try await client.createRecords((start..<min(parents, start + 200)).map { ["attributes": ["type": "Account"], "Name": .string("Bench \($0)")] })
                .compactMap(\.id)
        }
    }
    for try await ids in group { accountIds += ids }
}
try await withThrowingTaskGroup(of: Void.self) { group in
    let contacts = accountIds.flatMap { id in (0..<childrenPerParent).map { (id, $0) } }
    for chunk in contacts.chunked(into: 200) {
        group.addTask {
            _ = try await client.createRecords(chunk.map { ["attributes": ["type": "Contact"], "LastName": .string("Contact \($0.1)"), "AccountId": .string($0.0)] })
        }
    }
    try await group.waitForAll()
}
let seededPeak = peakMegabytes()

// The reference: the sync's own query, its pages fetched one after another and dropped.
let rawStart = ContinuousClock.now
var rawRecords = 0
for try await account in client.query("""
    SELECT Name, Id, LastModifiedDate, (SELECT LastName, AccountId, Id, LastModifiedDate FROM Contacts ORDER BY Id) \
    FROM Account WHERE Name LIKE 'Bench%' ORDER BY LastModifiedDate
    """) {
    rawRecords += 1 + (account["Contacts"]?["records"]?.arrayValue?.count ?? 0)
}
let rawElapsed = ContinuousClock.now - rawStart
let rawSeconds = Double(rawElapsed.components.seconds) + Double(rawElapsed.components.attoseconds) / 1e18
await client.shutdown()

let pipelinePath = folder + "/pipeline.json"
try """
    { "name": "bench", "org": { "instanceUrl": "\(instanceURL)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
      "store": "store.sqlite",
      "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "__local__", "type": "string" } ] },
                 { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                        { "path": "__local__", "type": "string" } ] } ],
      "syncs": [ { "syncName": "down", "syncType": "syncDown", "soupName": "Accounts",
                   "target": { "type": "parent_children", "relationshipType": "MASTER_DETAIL",
                               "parent": { "sobjectType": "Account", "soupName": "Accounts" }, "parentFieldlist": ["Name"],
                               "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts",
                                             "parentIdFieldName": "AccountId" },
                               "childrenFieldlist": ["LastName", "AccountId"], "parentSoqlFilter": "Name LIKE 'Bench%'" } } ],
      "stages": [ { "id": "down", "type": "syncDown", "sync": "down" } ] }
    """.write(toFile: pipelinePath, atomically: true, encoding: .utf8)
let pipeline = try PipelineLoader(registry: .builtIn, variables: VariableResolver(variables: ["TOKEN": token])).load(path: pipelinePath)
let connector: OrgConnector = { configuration in
    guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
    return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
}
let start = ContinuousClock.now
let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(reportDirectory: folder + "/report"), observer: QuietObserver(),
                                       orgConnector: connector).run()
let elapsed = ContinuousClock.now - start
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let stored = outcome.report.stages[0].counts["created"] ?? 0
let total = parents * (1 + childrenPerParent)
print("SyncDownBenchmark")
print(String(format: "  %d parents × %d children = %d records synced down in %.1f s: %.0f records/s; peak RSS %.0f MB (after seeding %.0f MB; the emulator runs in its own process)",
             parents, childrenPerParent, stored, seconds, Double(stored) / seconds, peakMegabytes(), seededPeak))
print(String(format: "  the same query fetched raw (pages read and dropped): %d records in %.1f s; the sync down takes %.2f× that",
             rawRecords, rawSeconds, seconds / rawSeconds))
server.terminate()
if outcome.exitCode != 0 || stored != total {
    FileHandle.standardError.write(Data("sync down stored \(stored) of \(total) records (exit \(outcome.exitCode)): \(outcome.report.error ?? "")\n".utf8))
    exit(1)
}
