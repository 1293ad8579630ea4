import Connectors
import Synchronization

/// Tells a sync up the org is down. Once `threshold` requests in a row got no answer — each timed
/// out, lost its connection or was refused (a 5xx, a busy org) through every retry — it suspects
/// the org: no further request leaves until those in flight have ended, then one alone probes it,
/// after a pause growing with each probe. Any answer, even one refusing every record, clears the
/// suspicion (a loaded org answering late times out several requests at once, then answers
/// again); ``probes`` probes in a row without an answer trip the breaker and the stage stops
/// sending. One breaker serves a whole sync-up stage (every page, part and round).
final class SyncUpBreaker: Sendable {
    /// Requests in a row without an answer that make the org suspect (`stopAfterFailedRequests`).
    let threshold: Int
    private struct State {
        var inARow = 0
        var timedOut = 0
        var lastProblem = ""
        var inFlight = 0
        var probing = false
        var failedProbes = 0
        var tripped: StageFailure?
        var waiting: [CheckedContinuation<Bool?, Never>] = []

        mutating func takeWaiting() -> [CheckedContinuation<Bool?, Never>] {
            defer { waiting = [] }
            return waiting
        }

        /// One more request (or read) in a row without an answer.
        mutating func count(_ error: OrgClientError) {
            inARow += 1
            if case .uncertain = error { timedOut += 1 }
            lastProblem = "\(error)"
        }

        /// Stops the stage, saying why.
        mutating func trip() {
            let how = timedOut == inARow ? "timed out or lost their connection" : timedOut == 0 ? "were refused" : "timed out or were refused"
            tripped = StageFailure(.failed, "the org stopped answering: \(inARow) requests in a row \(how) (the last: \(lastProblem)); what was not sent stays dirty for the next run")
        }
    }
    private let state = Mutex(State())

    init(threshold: Int = SyncUpStage.defaultStopAfterFailedRequests) {
        self.threshold = max(1, threshold)
    }

    /// Probes sent alone, each after a pause, that must all go unanswered to trip the breaker: an
    /// org answering most requests late answers one of them.
    static let probes = 3

    /// Why the stage stops, once the breaker has tripped.
    var tripped: StageFailure? { state.withLock { $0.tripped } }

    /// A request about to leave. Returns whether it may (then ``ended(answered:)`` or
    /// ``failed(_:)`` must follow), waiting while the org is suspect and another request is in
    /// flight; `false` once the breaker has tripped.
    func admit() async -> Bool {
        while true {
            var pause = 0
            let admitted: Bool? = await withCheckedContinuation { continuation in
                let verdict = state.withLock { state -> Bool? in
                    if state.tripped != nil { return false }
                    if state.inARow < threshold {
                        state.inFlight += 1
                        return true
                    }
                    if state.inFlight == 0 && !state.probing {
                        state.inFlight += 1
                        state.probing = true
                        pause = state.failedProbes
                        return true
                    }
                    state.waiting.append(continuation)
                    return nil
                }
                if let verdict { continuation.resume(returning: verdict) }
            }
            guard let admitted else { continue }
            // A probe after one that went unanswered gives the org a moment: 0.5 s, then 1 s.
            if admitted && pause > 0 { try? await Task.sleep(for: .milliseconds(250 << min(pause, 4))) }
            return admitted
        }
    }

    /// A request the org answered (whatever it said of each record).
    func answered() {
        wake(state.withLock { state in
            state.inFlight -= 1
            state.probing = false
            state.failedProbes = 0
            state.inARow = 0
            state.timedOut = 0
            return state.takeWaiting()
        })
    }

    /// A request that got no answer (`error` says why); returns the stop once it trips the breaker.
    @discardableResult
    func failed(_ error: OrgClientError) -> StageFailure? {
        let (failure, waiting) = state.withLock { state -> (StageFailure?, [CheckedContinuation<Bool?, Never>]) in
            state.inFlight -= 1
            if let tripped = state.tripped { return (tripped, state.takeWaiting()) }
            state.count(error)
            if state.probing {
                state.probing = false
                state.failedProbes += 1
            }
            if state.failedProbes >= Self.probes { state.trip() }
            return (state.tripped, state.takeWaiting())
        }
        wake(waiting)
        return failure
    }

    /// A read of the sync up's own (a conflict check, new dates) that got no answer through every
    /// retry: counted with the requests in a row. Reads are not admitted and cannot probe, so past
    /// the threshold and the probes' count it trips the breaker; returns the stop then.
    func readGotNoAnswer(_ error: OrgClientError) -> StageFailure? {
        let (failure, waiting) = state.withLock { state -> (StageFailure?, [CheckedContinuation<Bool?, Never>]) in
            if let tripped = state.tripped { return (tripped, []) }
            state.count(error)
            if state.inARow >= threshold + Self.probes { state.trip() }
            return (state.tripped, state.tripped == nil ? [] : state.takeWaiting())
        }
        wake(waiting)
        return failure
    }

    /// A read of the sync up's own that the org answered: it is up.
    func readAnswered() {
        state.withLock { state in
            guard state.tripped == nil, !state.probing else { return }
            state.inARow = 0
            state.timedOut = 0
            state.failedProbes = 0
        }
    }

    /// A request admitted but ended without reaching the org (nothing to learn from it).
    func withdrawn() {
        wake(state.withLock { state in
            state.inFlight -= 1
            state.probing = false
            return state.takeWaiting()
        })
    }

    private func wake(_ waiting: [CheckedContinuation<Bool?, Never>]) {
        // Each waiter looks again: one may probe, the others wait for its answer.
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    /// Whether `error` is the org not answering (as opposed to an answer: a refusal of the
    /// request's content, the daily limit, a refused login).
    static func isNoAnswer(_ error: any Error) -> OrgClientError? {
        guard let error = error as? OrgClientError else { return nil }
        switch error {
        case .uncertain, .gaveUp: return error
        case .authenticationFailed, .requestLimitExceeded, .invalidConfiguration, .invalidResponse: return nil
        }
    }
}
