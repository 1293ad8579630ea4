// ClientBenchmark: the org client's concurrency under latency. Starts an emulator in-process with
// `latencyMs` injected on every request, then sends N small GET requests through one
// SalesforceClient for each in-flight limit, and prints wall time against the serial bound
// (N × latency).
//
//   swift run -c release ClientBenchmark [--requests N] [--latency-ms L] [--smoke]

import CJemalloc
import Connectors
import Foundation
import JSON
import OrgEmulator

// jemalloc is linked (`import CJemalloc`) as in `pipeline`, so the figures are the product's.

var requests = 200
var latency = 100
var limits = [1, 8, 16]
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--requests": requests = Int(arguments.next() ?? "") ?? requests
    case "--latency-ms": latency = Int(arguments.next() ?? "") ?? latency
    case "--smoke": (requests, latency, limits) = (20, 10, [1, 8])
    default:
        FileHandle.standardError.write(Data("usage: ClientBenchmark [--requests N] [--latency-ms L] [--smoke]\n".utf8))
        exit(2)
    }
}

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL.path
let emulator = try OrgEmulator(configuration: .init(seedPath: root + "/samples/org/seed.json", latencyMs: latency))
let running = try await emulator.start()
let instanceURL = running.instanceURL

print("ClientBenchmark: \(requests) GET /limits requests, \(latency) ms injected latency each; serial bound \(requests * latency) ms")
for limit in limits {
    let client = try SalesforceClient(settings: OrgConnectionSettings(
        instanceURL: instanceURL, maxInFlight: limit, auth: .accessToken(accessToken: emulator.accessToken)))
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<requests {
            group.addTask { _ = try await client.limits() }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - started
    let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    let usage = await client.usage()
    print(String(format: "  maxInFlight %2d: %7.0f ms  (%.1f× faster than serial; %d requests sent)",
                 limit, milliseconds, Double(requests * latency) / milliseconds, usage.requests))
    await client.shutdown()
}
await running.stop()
