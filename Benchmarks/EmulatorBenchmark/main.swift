// EmulatorBenchmark: how many records per second the org emulator writes through sObject
// Collections (200 records per request), over real HTTP on loopback.
//
//   swift run -c release EmulatorBenchmark [--records N] [--in-flight K] [--database FILE] [--smoke]
//
// Starts an emulator in-process with the sample seed (an on-disk database in a temp folder unless
// --database is given), then POSTs N new Accounts to /composite/sobjects with K requests in flight,
// and prints records/second. `--smoke` (CI) writes 2,000 records and checks every one succeeded.

import CJemalloc
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import OrgEmulator

// jemalloc is linked (`import CJemalloc`) as in `pipeline`, so the figures are the product's.

struct Options {
    var records = 20_000
    var inFlight = 4
    var database: String?

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--records": options.records = Int(iterator.next() ?? "") ?? options.records
            case "--in-flight": options.inFlight = Int(iterator.next() ?? "") ?? options.inFlight
            case "--database": options.database = iterator.next()
            case "--smoke": options.records = 2_000
            default:
                FileHandle.standardError.write(Data("usage: EmulatorBenchmark [--records N] [--in-flight K] [--database FILE] [--smoke]\n".utf8))
                exit(2)
            }
        }
        return options
    }
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL.path
let folder = NSTemporaryDirectory() + "emulator-benchmark-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }

let emulator = try OrgEmulator(configuration: .init(
    databasePath: options.database ?? folder + "/org.sqlite", seedPath: root + "/samples/org/seed.json"))
let running = try await emulator.start()
let instanceURL = running.instanceURL

let token = emulator.accessToken
let batches = stride(from: 0, to: options.records, by: 200).map { start in (start, min(200, options.records - start)) }

/// POSTs one Collections request and returns how many records succeeded.
@Sendable func send(start: Int, count: Int) async throws -> Int {
    let records: [JSONValue] = (start..<start + count).map { index in
        ["attributes": ["type": "Account"], "Name": .string("Benchmark \(index)"), "NumberOfEmployees": .integer(Int64(index))]
    }
    var request = URLRequest(url: URL(string: instanceURL + "/services/data/v62.0/composite/sobjects")!)
    request.httpMethod = "POST"
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data(JSONValue.object(["allOrNone": false, "records": .array(records)]).jsonString.utf8)
    let (data, _) = try await URLSession.shared.data(for: request)
    let results = try JSONParser.parse(data).value.arrayValue ?? []
    return results.filter { $0["success"] == true }.count
}

let started = ContinuousClock.now
let succeeded = try await withThrowingTaskGroup(of: Int.self) { group in
    var next = 0
    var total = 0
    for _ in 0..<min(options.inFlight, batches.count) {
        let (start, count) = batches[next]
        group.addTask { try await send(start: start, count: count) }
        next += 1
    }
    while let done = try await group.next() {
        total += done
        if next < batches.count {
            let (start, count) = batches[next]
            group.addTask { try await send(start: start, count: count) }
            next += 1
        }
    }
    return total
}
let elapsed = ContinuousClock.now - started
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
await running.stop()

print("EmulatorBenchmark: \(options.records) records through sObject Collections, \(options.inFlight) requests in flight")
print(String(format: "  %.2f s  %.0f records/s  (%d requests)", seconds, Double(succeeded) / seconds, batches.count))
if succeeded != options.records {
    print("FAIL: only \(succeeded) of \(options.records) records were created")
    exit(1)
}
print("OK")
