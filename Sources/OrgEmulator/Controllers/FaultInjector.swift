/// The faults in force and the draws that decide them: one seeded sequence, so a seed gives the
/// same faults on every run (`POST /emulator/faults`, `--faults`; docs/emulator.md).
struct FaultInjector: Sendable {
    let settings: FaultSettings
    private var random: SeededRandom
    /// Requests still to fail in the current error burst.
    private var remainingBurst = 0

    init(_ settings: FaultSettings = FaultSettings()) {
        self.settings = settings
        random = SeededRandom(seed: settings.seed)
    }

    /// Whether a request, arriving after `stats` counted it, is held until the faults change.
    func stalls(isWrite: Bool, stats: RequestStats) -> Bool {
        settings.stallAfterRequests > 0 && stats.total > settings.stallAfterRequests
            || settings.stallAfterWrites > 0 && isWrite && stats.writes > settings.stallAfterWrites
    }

    /// How long a request waits before it runs, in milliseconds: the latency, the write
    /// latency, and now and then a spike.
    mutating func latencyMs(isWrite: Bool) -> Int {
        var delay = settings.latencyMs + (isWrite ? settings.writeLatencyMs : 0)
        if settings.latencySpikeMs > 0 && random.chance(settings.latencySpikeRate) { delay += settings.latencySpikeMs }
        return delay
    }

    /// The error a request is answered with instead of running, if one is injected (a burst
    /// fails the requests after it too).
    mutating func requestError() -> APIError? {
        guard remainingBurst > 0 || random.chance(settings.errorRate) else { return nil }
        remainingBurst = remainingBurst > 0 ? remainingBurst - 1 : settings.errorBurst
        return APIError(settings.errorStatus, settings.errorCode, "Injected fault: \(settings.errorCode)")
    }

    /// The error one record of a Composite, batch or Collections request fails with, if one is
    /// injected.
    mutating func recordError() -> APIError? {
        guard random.chance(settings.recordErrorRate) else { return nil }
        return APIError(400, settings.recordErrorCode, "Injected record fault: \(settings.recordErrorCode)", fields: [])
    }

    /// Whether a committed write's answer is dropped.
    mutating func dropsAnswer() -> Bool {
        random.chance(settings.dropAfterCommitRate)
    }
}
