import Connectors
import Foundation
import JSON
import Soups
import Stages
import Testing

/// The soak matrix (issues 12 and 50): every fault profile × external id on / off × strategy, a
/// sync up of new Account trees (1 + 3 Contacts) run under the faults, then run again without them
/// until it succeeds; the org and the soups must then agree exactly (no duplicate, no loss, nothing
/// dirty, no `local_` id, every child under its own parent) and the counts add up. The first run
/// must keep going: it fails (exit 1) only where the org says stop (the daily limit) or stops
/// answering; otherwise every record ends it in the org, failed with a reason or uncertain, and it
/// exits 0 or 3. `swift test` runs it with 12 trees per case; `scripts/soak` with `SOAK_TREES`
/// (default 1,000).
@Suite struct SyncUpSoakTests {
    struct Profile: Sendable, CustomStringConvertible {
        var name: String
        var faults: JSONValue
        /// Client timeout and org deadline, for profiles whose requests outlive the client.
        var timeouts = false
        var refreshAuth = false
        /// The org says stop (the daily limit): the first run may fail.
        var stops = false
        var description: String { name }
    }

    static let profiles: [Profile] = [
        Profile(name: "503s", faults: ["errorRate": 0.15, "errorStatus": 503, "errorCode": "SERVER_UNAVAILABLE", "errorBurst": 2]),
        Profile(name: "dropped answers", faults: ["dropAfterCommitRate": 0.25]),
        Profile(name: "session expiry", faults: ["sessionExpiryEvery": 5], refreshAuth: true),
        Profile(name: "lock bursts", faults: ["recordErrorRate": 0.15, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "errorRate": 0.1,
                                              "errorBurst": 3, "errorStatus": 400, "errorCode": "UNABLE_TO_LOCK_ROW"]),
        Profile(name: "record locks on 5%", faults: ["recordErrorRate": 0.05, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "errorRate": 0.02,
                                                     "errorBurst": 4, "errorStatus": 400, "errorCode": "UNABLE_TO_LOCK_ROW"]),
        Profile(name: "record locks on 20%", faults: ["recordErrorRate": 0.2, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "errorRate": 0.05,
                                                      "errorBurst": 6, "errorStatus": 400, "errorCode": "UNABLE_TO_LOCK_ROW"]),
        Profile(name: "latency spikes past the timeout", faults: ["latencySpikeMs": 900, "latencySpikeRate": 0.15], timeouts: true),
        Profile(name: "latency spikes on 5%", faults: ["latencySpikeMs": 900, "latencySpikeRate": 0.05], timeouts: true),
        Profile(name: "latency spikes on 30%", faults: ["latencySpikeMs": 900, "latencySpikeRate": 0.3], timeouts: true),
        Profile(name: "daily limit", faults: ["dailyRequestLimit": 6], stops: true),
        Profile(name: "mix", faults: ["dropAfterCommitRate": 0.1, "errorRate": 0.05, "recordErrorRate": 0.05, "latencySpikeMs": 900,
                                      "latencySpikeRate": 0.05, "sessionExpiryEvery": 9], timeouts: true, refreshAuth: true),
    ]

    static let strategies = ["auto", "collections", "composite", "graph", "perTree"]

    static let trees = ProcessInfo.processInfo.environment["SOAK_TREES"].flatMap(Int.init) ?? 12
    /// The client's timeout in the timeout profiles: above what the org takes to answer the largest
    /// request of a page untroubled, so that only the spikes outlast it. Every case of the matrix
    /// runs at once, clients and emulators in one process on two cores: at 1,000 trees a request
    /// the debug emulator answers alone in a second can take it several (5 s timed out a probe
    /// sent alone now and then).
    static let timeoutSeconds = max(0.6, Double(trees) / 100)
    /// A spike outlasts the client's timeout; the org's deadline stops a request well after it.
    static let spikeMs = Int(timeoutSeconds * 1500)
    static let deadlineSeconds = timeoutSeconds * 2.5
    /// How long after a run the writes it gave up on are decided: its settle window has passed.
    static let settleSeconds = timeoutSeconds + deadlineSeconds + 2.4
    /// The org's settings for the timeout profiles, as the pipeline's `org` object gives them.
    static let timeoutSettings = "\"timeoutSeconds\": \(timeoutSeconds), \"requestDeadlineSeconds\": \(deadlineSeconds), "
    /// `SOAK_PROFILE=mix` runs one profile only (to chase a finding).
    static let selected = profiles.filter { profile in
        ProcessInfo.processInfo.environment["SOAK_PROFILE"].map { $0.isEmpty || $0 == profile.name } ?? true
    }

    @Test(arguments: selected, [false, true])
    func faultsEndExact(profile: Profile, externalId: Bool) async throws {
        for strategy in Self.strategies {
            let started = ContinuousClock.now
            try await soak(profile: profile, externalId: externalId, strategy: strategy)
            // The long form's trace (`scripts/soak` shows these lines): which case took how long.
            if Self.trees > 12 { print("soak: \(profile) \(strategy) external id \(externalId): \(ContinuousClock.now - started)") }
        }
    }

    func soak(profile: Profile, externalId: Bool, strategy: String) async throws {
        // The org's deadline is short only where the client is told it (the timeout profiles): an
        // org that silently rolled back a slow request the client thinks it may still apply would
        // hold its records undecided for the client's whole settle window (10 minutes).
        let bench = try await SyncHarness(requestDeadlineSeconds: profile.timeouts ? Self.deadlineSeconds : 30)
        defer { Task { await bench.close() } }
        let sync = externalId ? SyncUpIntegrityTests.syncWithExternalId : SyncUpIntegrityTests.sync
        let pipeline = try bench.pipeline(syncs: sync, stages: SyncUpIntegrityTests.stages(strategy),
                                          org: profile.timeouts ? Self.timeoutSettings : "",
                                          refreshAuth: profile.refreshAuth)
        let prefix = "Q\(strategy.prefix(2))\(externalId ? "x" : "n")"
        try await SyncUpIntegrityTests.putTrees(Self.trees, prefix: prefix, bench: bench, pipeline)
        if externalId { try await SyncUpIntegrityTests.setExternalIds(pipeline) }
        try await Self.setFaults(of: profile, on: bench)
        var created = 0
        let first = try await bench.run(pipeline)
        created += SyncUpIntegrityTests.created(first)
        let label = "\(profile) \(strategy) external id \(externalId)"
        if !profile.stops {
            try await Self.expectKeptGoing(first, trees: Self.trees, label: label, bench: bench, pipeline)
        }
        try await bench.setFaults([:])
        // Writes the client gave up on are decided once the org's deadline has passed.
        if profile.timeouts { await bench.letTimePass(seconds: Int(Self.settleSeconds.rounded(.up))) }
        var last = first
        for _ in 0..<2 where last.exitCode != 0 {
            last = try await bench.run(pipeline)
            created += SyncUpIntegrityTests.created(last)
        }
        #expect(last.exitCode == 0, "\(label): \(first.report.stages[0]) → \(last.report.stages[0])")
        #expect(created == Self.trees * 4, "\(label): counted created once each: \(first.report.stages[0].byObject) → \(last.report.stages[0].byObject)")
        try await SyncUpIntegrityTests.expectExact(Self.trees, prefix: prefix, bench: bench, pipeline)
    }

    /// A first run under faults that do not stop the org went on to the end: exit 0 or 3, every
    /// record counted once as created, failed or uncertain, and every record left dirty carries
    /// the reason (`__last_error__`): none was left unsent.
    static func expectKeptGoing(_ first: RunOutcome, trees: Int, label: String, bench: SyncHarness, _ pipeline: PipelineDefinition,
                                sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let stage = first.report.stages[0]
        #expect(first.exitCode == 0 || first.exitCode == 3, "\(label): the first run kept going: \(stage)", sourceLocation: sourceLocation)
        let counted = ["created", "updated", "failed", "uncertain"].reduce(0) { $0 + (stage.counts[$1] ?? 0) }
        #expect(counted == trees * 4, "\(label): every record counted once: \(stage.counts)", sourceLocation: sourceLocation)
        let dirty = try await bench.entries("Accounts", pipeline).filter(\.isDirty) + bench.entries("Contacts", pipeline).filter(\.isDirty)
        let unsent = dirty.filter { $0[SyncField.lastError] == nil || $0[SyncField.lastError] == .null }
        #expect(unsent.isEmpty, "\(label): \(unsent.count) dirty record(s) with no reason: not sent", sourceLocation: sourceLocation)
    }

    /// Sets the profile's faults; a daily limit counts from the requests the org has already had,
    /// a spike outlasts the client's timeout.
    static func setFaults(of profile: Profile, on bench: SyncHarness) async throws {
        var faults = profile.faults
        if faults["latencySpikeMs"] != nil, var object = faults.objectValue {
            object["latencySpikeMs"] = .integer(Int64(spikeMs))
            faults = .object(object)
        }
        if case .integer(let limit)? = faults["dailyRequestLimit"] {
            let stats = await bench.stats()
            var object = faults.objectValue ?? [:]
            object["dailyRequestLimit"] = .integer((stats["dailyRequests"]?.integerValue ?? 0) + limit)
            faults = .object(object)
        }
        try await bench.setFaults(faults.objectValue ?? [:])
    }
}
