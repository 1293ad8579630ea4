import Connectors
import Synchronization

/// What the parts of a page sent side by side share: at most `maxInFlight` requests in flight
/// together; a turn order (a part's first request waits until the part before it has a request
/// in flight or has ended); and a stop — once one part's request meets a fatal answer (a spent
/// budget, a refused login, a stop), no part sends another write.
final class SyncUpInFlight: Sendable {
    let limiter: ConcurrencyLimiter
    private struct State {
        /// Why the parts stopped (the first cause), once they have.
        var cause: (any Error)?
        /// Whether part `i` has passed its turn.
        var passed: [Bool]
        /// Requests waiting for part `i` to pass its turn.
        var waiting: [Int: [CheckedContinuation<Void, Never>]] = [:]
    }
    private let state: Mutex<State>

    init(maxInFlight: Int, parts: Int) {
        limiter = ConcurrencyLimiter(limit: max(1, maxInFlight))
        state = Mutex(State(passed: Array(repeating: false, count: parts)))
    }

    /// Why no further write may leave; `nil` while they may.
    var cause: (any Error)? { state.withLock { $0.cause } }

    /// Stops every part; the first cause is kept.
    func stop(because cause: any Error) {
        state.withLock { $0.cause = $0.cause ?? cause }
    }

    /// One part's place among the others.
    struct Part: Sendable {
        let shared: SyncUpInFlight
        let index: Int

        /// Returns once the part before this one has a request in flight or has ended.
        func awaitTurn() async {
            guard index > 0 else { return }
            await withCheckedContinuation { continuation in
                let ready = shared.state.withLock { state in
                    if state.passed[index - 1] { return true }
                    state.waiting[index - 1, default: []].append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }

        /// This part has a request in flight, or has ended: the next part may take a slot.
        func passTurn() {
            let waiting = shared.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                guard !state.passed[index] else { return [] }
                state.passed[index] = true
                return state.waiting.removeValue(forKey: index) ?? []
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    func part(_ index: Int) -> Part { Part(shared: self, index: index) }

    /// What a part's request not sent because another part stopped ends with: the part stops
    /// too (saving what the org confirmed), and the page reports the other part's ``cause``.
    struct Stopped: Error {}

    /// `body` (a read of one part's) run within the shared limit, or at once without one.
    static func limited<T: Sendable>(_ inFlight: Part?, _ body: @Sendable () async throws -> T) async throws -> T {
        guard let inFlight else { return try await body() }
        return try await inFlight.shared.limiter.run(body)
    }
}
