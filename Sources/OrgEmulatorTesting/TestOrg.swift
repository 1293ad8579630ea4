import Connectors
import JSON
import OrgEmulator

/// An org emulator for one test, on its own free loopback port, with its admin API in process
/// and a clock clients share with it — the test bench every test target builds on, as
/// HummingbirdTesting is for a Hummingbird application.
///
/// ```swift
/// try await withTestOrg { org in
///     let client = try org.client()
///     try await org.setFaults(["latencySpikeMs": 60_000, "latencySpikeRate": 1.0])
///     …
///     await org.advanceClock(seconds: 60)   // held requests finish; clients see the time pass
/// }
/// ```
public final class TestOrg: Sendable {
    public let emulator: OrgEmulator
    /// `http://127.0.0.1:PORT`.
    public let instanceURL: String
    private let running: RunningOrgEmulator

    /// The emulator's development token.
    public var accessToken: String { emulator.accessToken }

    private init(emulator: OrgEmulator, running: RunningOrgEmulator) {
        self.emulator = emulator
        self.instanceURL = running.instanceURL
        self.running = running
    }

    /// Starts an emulator of `seedPath` (the sample org's by default; `nil` for an empty org),
    /// in memory unless `databasePath` is given.
    public static func start(seedPath: String? = SampleOrg.seedPath, databasePath: String? = nil,
                             requestDeadlineSeconds: Double = 30) async throws -> TestOrg {
        let emulator = try OrgEmulator(configuration: .init(host: "127.0.0.1", port: 0, databasePath: databasePath, seedPath: seedPath,
                                                            requestDeadlineSeconds: requestDeadlineSeconds))
        return TestOrg(emulator: emulator, running: try await emulator.start())
    }

    /// Stops serving and waits until the port is closed.
    public func stop() async {
        await running.stop()
    }

    // MARK: Time

    /// The time as clients of this org should read it: this machine's clock, moved forward by
    /// ``advanceClock(seconds:)`` together with the org's.
    public var clock: WallClock {
        let emulator = self.emulator
        return WallClock { WallClock.system.now() + emulator.clockOffsetSeconds * 1000 }
    }

    /// Lets `seconds` pass for the org and for clients using ``clock``: record dates move on,
    /// requests held by latency finish, and deadlines pass — without waiting for them.
    public func advanceClock(seconds: Int = 2) {
        emulator.advanceClock(bySeconds: Int64(seconds))
    }

    /// Returns once no request is being handled (a request a stall holds ends only when the
    /// faults change).
    public func waitUntilIdle() async {
        await emulator.waitUntilIdle()
    }

    // MARK: Admin

    /// Sets the faults (docs/emulator.md); `[:]` clears them and releases held requests.
    public func setFaults(_ faults: JSONObject) async throws {
        try await emulator.setFaults(faults)
    }

    /// The counters of `/emulator/stats`.
    public func stats() async -> JSONValue {
        await emulator.stats()
    }

    /// Requests of one kind the org received.
    public func received(_ kind: String) async -> Int {
        Int(await stats()["requests"]?["byKind"]?[kind]?.integerValue ?? 0)
    }

    /// Write requests the org received.
    public func writes() async -> Int {
        Int(await stats()["requests"]?["writes"]?.integerValue ?? 0)
    }

    /// Live records of one type.
    public func recordCount(_ type: String) async -> Int {
        Int(await stats()["records"]?[type]?.integerValue ?? 0)
    }

    // MARK: Clients

    /// Retries that wait next to nothing, so fault tests stay fast.
    public static let fastRetry = RetryPolicy(maxAttempts: 3, baseDelaySeconds: 0.001, maxDelaySeconds: 0.01)

    /// A client of this org on its ``clock``; the development token (`access_token` flow) by
    /// default. `instanceURL` `.some(nil)` leaves it to the login.
    public func client(auth: OrgAuth? = nil, instanceURL: String?? = .none, maxInFlight: Int = 8, retry: RetryPolicy = TestOrg.fastRetry,
                       timeoutSeconds: Double = 30, requestDeadlineSeconds: Double? = nil,
                       transport: (any HTTPTransport)? = nil) throws -> SalesforceClient {
        let auth = auth ?? .accessToken(accessToken: accessToken)
        let instance: String?
        switch instanceURL {
        case .none: if case .accessToken = auth { instance = self.instanceURL } else { instance = nil }
        case .some(let value): instance = value
        }
        let settings = OrgConnectionSettings(instanceURL: instance, loginURL: self.instanceURL, maxInFlight: maxInFlight,
                                             timeoutSeconds: timeoutSeconds,
                                             requestDeadlineSeconds: requestDeadlineSeconds ?? emulator.requestDeadlineSeconds,
                                             auth: auth, retry: retry)
        return try SalesforceClient(settings: settings, transport: transport, clock: clock)
    }
}

/// Runs `body` against a fresh ``TestOrg`` and stops it afterwards.
public func withTestOrg<T>(seedPath: String? = SampleOrg.seedPath, requestDeadlineSeconds: Double = 30,
                           _ body: (TestOrg) async throws -> T) async throws -> T {
    let org = try await TestOrg.start(seedPath: seedPath, requestDeadlineSeconds: requestDeadlineSeconds)
    do {
        let value = try await body(org)
        await org.stop()
        return value
    } catch {
        await org.stop()
        throw error
    }
}
