import Connectors
import Synchronization

/// What the parts of a page sent side by side share: at most `maxInFlight` requests in flight
/// together, taken in the parts' order (a part's first request waits until the part before it
/// has one in flight, or has ended), and a stop — once one part's request meets a fatal answer
/// (a spent budget, a refused login, a stop), no part sends another.
final class SyncUpInFlight: Sendable {
    let limiter: ConcurrencyLimiter
    private let stopped = Mutex(false)
    /// Finished once part `i` has a request in flight or has ended.
    private let turns: [(stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)]

    init(maxInFlight: Int, parts: Int) {
        limiter = ConcurrencyLimiter(limit: max(1, maxInFlight))
        turns = (0..<parts).map { _ in AsyncStream<Void>.makeStream() }
    }

    /// Whether no further request may leave.
    var isStopped: Bool { stopped.withLock { $0 } }

    func stop() {
        stopped.withLock { $0 = true }
    }

    /// One part's place among the others.
    struct Part: Sendable {
        let shared: SyncUpInFlight
        let index: Int

        /// Returns once the part before this one has a request in flight or has ended.
        func awaitTurn() async {
            guard index > 0 else { return }
            for await _ in shared.turns[index - 1].stream {}
        }

        /// This part has a request in flight, or has ended: the next part may take a slot.
        func passTurn() {
            shared.turns[index].continuation.finish()
        }
    }

    func part(_ index: Int) -> Part { Part(shared: self, index: index) }

    /// What a part's request not sent because another part stopped ends with: the part stops
    /// too (saving what the org confirmed), and the other part's error is the page's.
    struct Stopped: Error {}

    /// `body` (a read of one part's) run within the shared limit, or at once without one.
    static func limited<T: Sendable>(_ inFlight: Part?, _ body: @Sendable () async throws -> T) async throws -> T {
        guard let inFlight else { return try await body() }
        return try await inFlight.shared.limiter.run(body)
    }
}
