import Connectors
import Foundation
import JSON
import Soups
import Stages
import Testing

/// The soak matrix (issue 12): every fault profile × external id on / off × transport, a sync up
/// of new Account trees (1 + 3 Contacts) run under the faults, then run again without them until
/// it succeeds; the org and the soups must then agree exactly (no duplicate, no loss, nothing
/// dirty, no `local_` id, every child under its own parent) and the counts add up. `swift test`
/// runs it with 12 trees per case; `scripts/soak` with `SOAK_TREES` (default 1,000).
@Suite struct SyncUpSoakTests {
    struct Profile: Sendable, CustomStringConvertible {
        var name: String
        var faults: JSONValue
        /// Client timeout and org deadline, for profiles whose requests outlive the client.
        var timeouts = false
        var refreshAuth = false
        var description: String { name }
    }

    static let profiles: [Profile] = [
        Profile(name: "503s", faults: ["errorRate": 0.15, "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE", "errorBurst": 2]),
        Profile(name: "dropped answers", faults: ["dropAfterCommitRate": 0.25]),
        Profile(name: "session expiry", faults: ["sessionExpiryEvery": 5], refreshAuth: true),
        Profile(name: "lock bursts", faults: ["recordErrorRate": 0.15, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "errorRate": 0.1,
                                              "errorBurst": 3, "errorStatus": 400, "errorCode": "UNABLE_TO_LOCK_ROW"]),
        Profile(name: "latency spikes past the timeout", faults: ["latencySpikeMs": 900, "latencySpikeRate": 0.15], timeouts: true),
        Profile(name: "daily limit", faults: ["dailyRequestLimit": 6]),
        Profile(name: "mix", faults: ["dropAfterCommitRate": 0.1, "errorRate": 0.05, "recordErrorRate": 0.05, "latencySpikeMs": 900,
                                      "latencySpikeRate": 0.05, "sessionExpiryEvery": 9], timeouts: true, refreshAuth: true),
    ]

    static let trees = ProcessInfo.processInfo.environment["SOAK_TREES"].flatMap(Int.init) ?? 12
    /// `SOAK_PROFILE=mix` runs one profile only (to chase a finding).
    static let selected = profiles.filter { profile in
        ProcessInfo.processInfo.environment["SOAK_PROFILE"].map { $0.isEmpty || $0 == profile.name } ?? true
    }

    @Test(arguments: selected, [false, true])
    func faultsEndExact(profile: Profile, externalId: Bool) async throws {
        for strategy in ["collections", "composite", "graph"] {
            try await soak(profile: profile, externalId: externalId, strategy: strategy)
        }
    }

    func soak(profile: Profile, externalId: Bool, strategy: String) async throws {
        // The org's deadline is short only where the client is told it (the timeout profiles): an
        // org that silently rolled back a slow request the client thinks it may still apply would
        // hold its records undecided for the client's whole settle window (10 minutes).
        let bench = try await SyncHarness(requestDeadlineSeconds: profile.timeouts ? 1.5 : 30)
        defer { Task { await bench.close() } }
        let sync = externalId ? SyncUpIntegrityTests.syncWithExternalId : SyncUpIntegrityTests.sync
        let pipeline = try bench.pipeline(syncs: sync, stages: SyncUpIntegrityTests.stages(strategy),
                                          org: profile.timeouts ? #""timeoutSeconds": 0.6, "requestDeadlineSeconds": 1.5, "# : "",
                                          refreshAuth: profile.refreshAuth)
        let prefix = "Q\(strategy.prefix(2))\(externalId ? "x" : "n")"
        try await SyncUpIntegrityTests.putTrees(Self.trees, prefix: prefix, bench: bench, pipeline)
        if externalId { try await SyncUpIntegrityTests.setExternalIds(pipeline) }
        try await Self.setFaults(of: profile, on: bench)
        var created = 0
        let first = try await bench.run(pipeline)
        created += SyncUpIntegrityTests.created(first)
        try await bench.setFaults([:])
        // Writes the client gave up on are decided once the org's deadline has passed.
        if profile.timeouts { try await Task.sleep(for: .seconds(4.5)) }
        var last = first
        for _ in 0..<2 where last.exitCode != 0 {
            last = try await bench.run(pipeline)
            created += SyncUpIntegrityTests.created(last)
        }
        #expect(last.exitCode == 0, "\(profile) \(strategy) external id \(externalId): \(first.report.stages[0]) → \(last.report.stages[0])")
        #expect(created == Self.trees * 4, "\(profile) \(strategy): counted created once each: \(first.report.stages[0].byObject) → \(last.report.stages[0].byObject)")
        try await SyncUpIntegrityTests.expectExact(Self.trees, prefix: prefix, bench: bench, pipeline)
    }

    /// Sets the profile's faults; a daily limit counts from the requests the org has already had.
    static func setFaults(of profile: Profile, on bench: SyncHarness) async throws {
        var faults = profile.faults
        if case .integer(let limit)? = faults["dailyRequestLimit"] {
            let stats = try await bench.stats()
            var object = faults.objectValue ?? [:]
            object["dailyRequestLimit"] = .integer((stats["dailyRequests"]?.integerValue ?? 0) + limit)
            faults = .object(object)
        }
        try await bench.setFaults(faults)
    }
}
