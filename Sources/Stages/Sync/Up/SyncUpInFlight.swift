import Connectors
import Synchronization

/// What the parts of a page sent side by side share: at most `maxInFlight` requests in flight
/// together, and a stop — once one part's request meets a fatal answer (a spent budget, a
/// refused login), no part sends another.
final class SyncUpInFlight: Sendable {
    let limiter: ConcurrencyLimiter
    private let stopped = Mutex(false)

    init(maxInFlight: Int) {
        limiter = ConcurrencyLimiter(limit: max(1, maxInFlight))
    }

    /// Whether no further request may leave.
    var isStopped: Bool { stopped.withLock { $0 } }

    func stop() {
        stopped.withLock { $0 = true }
    }
}
