import Connectors
import Synchronization

/// Tells a sync up the org is down. Once `threshold` requests in a row got no answer — each timed
/// out, lost its connection or was refused (a 5xx, a busy org) through every retry — it suspects
/// the org: further requests (and the stage's own reads) leave one at a time, as probes, each
/// after a pause growing with the probes before it (0.5 s, doubling to 8 s), while those already
/// in flight finish. Any answer, even one refusing every record, clears the suspicion: a loaded
/// org, or a client starved of CPU, times out several requests at once, then answers again. The
/// breaker trips, and the stage stops sending, only once ``probes`` probes in a row went
/// unanswered *and* the org has said nothing for `silence` (`stopAfterSilenceSeconds`): a count
/// alone mistakes a slow minute for an outage. One breaker serves a whole sync-up stage.
final class SyncUpBreaker: Sendable {
    /// Requests in a row without an answer that make the org suspect (`stopAfterFailedRequests`).
    let threshold: Int
    /// How long the org must have said nothing before the breaker trips.
    let silence: Duration
    private let clock: BreakerClock

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
        var lastAnswer: Duration
        var tripped: StageFailure?
        var waiting: [CheckedContinuation<Void, Never>] = []

        /// One more request (or read) in a row without an answer.
        mutating func count(_ error: OrgClientError) {
            inARow += 1
            if case .uncertain = error { timedOut += 1 }
            lastProblem = "\(error)"
        }

        /// The org answered: it is up.
        mutating func answered(at now: Duration) {
            inARow = 0
            timedOut = 0
            failedProbes = 0
            lastAnswer = now
        }

        /// Stops the stage, saying why.
        mutating func trip(silentFor silence: Duration) {
            let how = timedOut == inARow ? "timed out or lost their connection" : timedOut == 0 ? "were refused" : "timed out or were refused"
            let seconds = silence.components.seconds
            tripped = StageFailure(.failed, "the org stopped answering: \(inARow) requests in a row \(how), nothing answered for \(seconds) s (the last: \(lastProblem)); what was not sent stays dirty for the next run")
        }

        /// Everyone waiting, to look again.
        mutating func takeWaiting() -> [CheckedContinuation<Void, Never>] {
            defer { waiting = [] }
            return waiting
        }
    }
    private let state: Mutex<State>

    init(threshold: Int = SyncUpStage.defaultStopAfterFailedRequests,
         silence: Duration = .seconds(SyncUpStage.defaultStopAfterSilenceSeconds), clock: BreakerClock = .continuous) {
        self.threshold = max(1, threshold)
        self.silence = max(.zero, silence)
        self.clock = clock
        state = Mutex(State(lastAnswer: clock.now()))
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
                // A probe after one that went unanswered gives the org a moment: 0.5 s, doubling to 8 s.
                if pause > 0 { await clock.sleep(.milliseconds(250 << min(pause, 5))) }
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
        let now = clock.now()
        wake(state.withLock { state in
            if ticket.probe { state.probing = false }
            if state.tripped == nil { state.answered(at: now) }
            return state.takeWaiting()
        })
    }

    /// A request that got no answer (`error` says why); returns the stop once it trips the breaker.
    @discardableResult
    func failed(_ ticket: Ticket, _ error: OrgClientError) -> StageFailure? {
        let now = clock.now()
        let (failure, waiting) = state.withLock { state -> (StageFailure?, [CheckedContinuation<Void, Never>]) in
            if ticket.probe { state.probing = false }
            if let tripped = state.tripped { return (tripped, state.takeWaiting()) }
            state.count(error)
            if ticket.probe {
                state.failedProbes += 1
                let silent = now - state.lastAnswer
                if state.failedProbes >= Self.probes && silent >= silence { state.trip(silentFor: silent) }
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

    /// A read of the sync up's own (a conflict check, new dates), admitted like a request: while
    /// the org is suspect it waits its turn to probe. Its answer, or none, counts; its error is
    /// rethrown as is (the caller sees ``tripped`` for the stop). Once the breaker has tripped
    /// the read still goes, so that what the page wrote is dated and saved.
    func read<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard let ticket = await admit() else { return try await body() }
        do {
            let value = try await body()
            answered(ticket)
            return value
        } catch {
            switch error {
            case let error as OrgClientError:
                if let noAnswer = Self.isNoAnswer(error) {
                    failed(ticket, noAnswer)
                } else if case .invalidConfiguration = error {
                    withdrawn(ticket)
                } else {
                    answered(ticket)
                }
            case is OrgAPIError: answered(ticket)
            default: withdrawn(ticket)
            }
            throw error
        }
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

/// The breaker's time: the continuous clock, or one a test advances instead of sleeping.
struct BreakerClock: Sendable {
    /// Time since some fixed origin.
    let now: @Sendable () -> Duration
    /// Waits `duration` (a manual clock moves on by it at once).
    let sleep: @Sendable (Duration) async -> Void

    /// The machine's monotonic clock.
    static let continuous: BreakerClock = {
        let origin = ContinuousClock.now
        return BreakerClock(now: { ContinuousClock.now - origin }, sleep: { try? await Task.sleep(for: $0) })
    }()
}
