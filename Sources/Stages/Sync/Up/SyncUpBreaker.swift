import Connectors
import Synchronization

/// Tells a sync up the org is down. Once `threshold` requests in a row got no answer — each timed
/// out, lost its connection or was refused (a 5xx, a busy org) through every retry — it suspects
/// the org: further requests leave one at a time, as probes, each after a pause growing with the
/// probes before it, while those already in flight finish. Any answer, even one refusing every
/// record, clears the suspicion (a loaded org answering late times out several requests at once,
/// then answers again); ``probes`` probes in a row without an answer trip the breaker and the
/// stage stops sending. One breaker serves a whole sync-up stage (every page, part and round).
final class SyncUpBreaker: Sendable {
    /// Requests in a row without an answer that make the org suspect (`stopAfterFailedRequests`).
    let threshold: Int

    /// Probes that must all go unanswered to trip the breaker: an org answering most requests
    /// late answers one of them.
    static let probes = 3

    /// A request let through: report its end with it, exactly once.
    struct Ticket: Sendable {
        /// Sent alone while the org is suspect: its answer, or none, decides.
        let probe: Bool
    }

    private struct State {
        var inARow = 0
        var timedOut = 0
        var lastProblem = ""
        var probing = false
        var failedProbes = 0
        var tripped: StageFailure?
        var waiting: [CheckedContinuation<Void, Never>] = []

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

        /// Everyone waiting, to look again.
        mutating func takeWaiting() -> [CheckedContinuation<Void, Never>] {
            defer { waiting = [] }
            return waiting
        }
    }
    private let state = Mutex(State())

    init(threshold: Int = SyncUpStage.defaultStopAfterFailedRequests) {
        self.threshold = max(1, threshold)
    }

    /// Why the stage stops, once the breaker has tripped.
    var tripped: StageFailure? { state.withLock { $0.tripped } }

    /// A request about to leave: its ticket, waiting while the org is suspect and a probe is out;
    /// `nil` once the breaker has tripped.
    func admit() async -> Ticket? {
        while true {
            enum Verdict { case stop, go(Ticket, pause: Int), wait }
            let verdict = state.withLock { state -> Verdict in
                if state.tripped != nil { return .stop }
                if state.inARow < threshold { return .go(Ticket(probe: false), pause: 0) }
                if state.probing { return .wait }
                state.probing = true
                return .go(Ticket(probe: true), pause: state.failedProbes)
            }
            switch verdict {
            case .stop:
                return nil
            case .go(let ticket, let pause):
                // A probe after one that went unanswered gives the org a moment: 0.5 s, then 1 s.
                if pause > 0 { try? await Task.sleep(for: .milliseconds(250 << min(pause, 4))) }
                return ticket
            case .wait:
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Bool in
                        // The probe may have ended between the look and the wait.
                        guard state.probing, state.tripped == nil, state.inARow >= threshold else { return true }
                        state.waiting.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }
    }

    /// A request the org answered (whatever it said of each record): the org is up.
    func answered(_ ticket: Ticket) {
        wake(state.withLock { state in
            if ticket.probe { state.probing = false }
            guard state.tripped == nil else { return state.takeWaiting() }
            state.inARow = 0
            state.timedOut = 0
            state.failedProbes = 0
            return state.takeWaiting()
        })
    }

    /// A request that got no answer (`error` says why); returns the stop once it trips the breaker.
    @discardableResult
    func failed(_ ticket: Ticket, _ error: OrgClientError) -> StageFailure? {
        let (failure, waiting) = state.withLock { state -> (StageFailure?, [CheckedContinuation<Void, Never>]) in
            if ticket.probe { state.probing = false }
            if let tripped = state.tripped { return (tripped, state.takeWaiting()) }
            state.count(error)
            if ticket.probe {
                state.failedProbes += 1
                if state.failedProbes >= Self.probes { state.trip() }
            }
            return (state.tripped, state.takeWaiting())
        }
        wake(waiting)
        return failure
    }

    /// A request let through that ended without reaching the org (nothing to learn from it).
    func withdrawn(_ ticket: Ticket) {
        guard ticket.probe else { return }
        wake(state.withLock { state in
            state.probing = false
            return state.takeWaiting()
        })
    }

    /// A read of the sync up's own (a conflict check, new dates) that got no answer through every
    /// retry: counted with the requests in a row. Reads do not probe, so past the threshold and
    /// the probes' count it trips the breaker; returns the stop then.
    func readGotNoAnswer(_ error: OrgClientError) -> StageFailure? {
        let (failure, waiting) = state.withLock { state -> (StageFailure?, [CheckedContinuation<Void, Never>]) in
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
        wake(state.withLock { state in
            guard state.tripped == nil else { return [] }
            state.inARow = 0
            state.timedOut = 0
            state.failedProbes = 0
            return state.takeWaiting()
        })
    }

    private func wake(_ waiting: [CheckedContinuation<Void, Never>]) {
        // Each waiter looks again: one may probe, the others wait for its answer.
        for continuation in waiting { continuation.resume() }
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
