import Foundation

/// Reports how far a long stage has come — `done` of `total` units, the rate and what is left —
/// without flooding the console or the log: an event when another percent is done (at most two
/// a second), or every five seconds when the total is unknown or the work is slow.
public struct ProgressMeter: Sendable {
    private let stage: String
    private let unit: String
    private let total: Int64?
    private let emit: @Sendable (RunEvent) -> Void
    private let started = ContinuousClock.now
    private var lastEmitted = ContinuousClock.now
    private var lastPercent: Int64 = 0
    private var lastDone: Int64 = 0

    init(stage: String, unit: String, total: Int64?, emit: @escaping @Sendable (RunEvent) -> Void) {
        self.stage = stage
        self.unit = unit
        self.total = total
        self.emit = emit
    }

    /// Notes that `done` units are done; emits an event when one is due.
    public mutating func advance(to done: Int64) {
        let now = ContinuousClock.now
        let since = now - lastEmitted
        let percent = total.map { $0 > 0 ? done * 100 / $0 : 0 } ?? 0
        let due = (total != nil && percent > lastPercent && since >= .milliseconds(500)) || since >= .seconds(5)
        guard due, done > lastDone else { return }
        lastEmitted = now
        lastPercent = percent
        lastDone = done
        let elapsed = Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18
        emit(.work(stage: stage, done: done, total: total, unit: unit, rate: elapsed > 0 ? Double(done) / elapsed : 0))
    }
}
