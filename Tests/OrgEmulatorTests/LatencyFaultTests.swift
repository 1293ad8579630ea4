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

    /// Latency runs on the org's clock: advancing it ends a held request at once — applied inside
    /// the request deadline, stopped unapplied past it — so tests never wait for either.
    @Test func advancingTheClockEndsHeldRequests() async throws {
        try await withEmulator(requestDeadlineSeconds: 30) { (emu) async throws in
            /// Creates an account held `holdSeconds` by latency, lets that much time pass, and
            /// returns the answer.
            func createHeld(_ name: String, holdSeconds: Int) async throws -> Reply {
                #expect(try await emu.send("POST", "/emulator/faults", json: ["writeLatencyMs": .integer(Int64(holdSeconds * 1000))],
                                           auth: .none).status == 200)
                let held = Task { try await emu.rest("POST", "/sobjects/Account", json: ["Name": .string(name)]) }
                while try await emu.stats()["requests"]?["inFlight"] != 1 { await Task.yield() }
                try await emu.advanceClock(holdSeconds)
                return try await held.value
            }
            #expect(try await createHeld("Inside", holdSeconds: 20).status == 201)
            expectError(try await createHeld("Past", holdSeconds: 40), 500, "REQUEST_RUNNING_TOO_LONG")
            let names = try await emu.rest("GET", "/query?q=SELECT+Name+FROM+Account+WHERE+Name+IN+('Inside','Past')").json["records"]
            #expect(names?.arrayValue?.compactMap { $0["Name"]?.stringValue } == ["Inside"])
            #expect(try await emu.stats()["requests"]?["inFlight"] == 0)
        }
    }
}
