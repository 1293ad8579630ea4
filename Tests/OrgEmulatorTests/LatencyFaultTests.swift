import Foundation
import JSON
import Testing

/// Latency faults delay `/services/*` answers (a lower bound only: no timing verdicts on speed).
@Suite struct LatencyFaultTests {
    func elapsedMilliseconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    @Test func latencyAndSpikesDelayServicesButNotTheAdminAPI() async throws {
        try await withEmulator { (emu) async throws in
            #expect(try await emu.send("POST", "/emulator/faults", json: ["latencyMs": 150], auth: .none).status == 200)
            let delayed = try await elapsedMilliseconds { () async throws in
                #expect(try await emu.rest("GET", "/limits").status == 200)
            }
            #expect(delayed >= 150)
            #expect(try await emu.send("POST", "/emulator/faults", json: ["latencyMs": 10, "latencySpikeMs": 200, "latencySpikeRate": 1],
                                       auth: .none).status == 200)
            let spiked = try await elapsedMilliseconds { () async throws in
                #expect(try await emu.rest("GET", "/limits").status == 200)
            }
            #expect(spiked >= 210)
            #expect(try await emu.send("POST", "/emulator/faults", json: ["latencyMs": 5000], auth: .none).status == 200)
            // The admin API is outside the faults: clearing them is immediate.
            #expect(try await emu.send("POST", "/emulator/faults", json: [:], auth: .none).status == 200)
            let stats = try await emu.stats()
            #expect(stats["requests"]?["byKind"]?["limits"] == 2)
        }
    }
}
