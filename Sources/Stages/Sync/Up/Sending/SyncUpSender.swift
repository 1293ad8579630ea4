import Connectors
import Foundation
import JSON
import Soups
import Synchronization

/// Sends packed requests phase by phase: fills each child's link to a parent created earlier
/// (by `@{ref.id}` within one Composite or Graph request, else by the id the org returned),
/// journals every write before its request leaves, runs a phase's requests concurrently (at most
/// `maxInFlight` at once), and reads every answer back into per-record outcomes.
struct SyncUpSender {
    let client: any OrgClient
    let store: SoupStore
    let syncName: String
    let maxInFlight: Int
    /// The target's own writes, when it makes them (``SyncUpRecordWriter``).
    let writer: (any SyncUpRecordWriter)?
    /// Checked before each phase; throws to stop the sync up (the API budget is spent).
    let checkBudget: @Sendable () async throws -> Void
    /// The records a Composite request of Collections reads back, by retrieves at the end of the
    /// same request (their ids referring to the writes' results): under LEAVE_IF_CHANGED, for
    /// the modification dates the org gave them. Empty: none.
    var readBack = SyncUpDateReads()
    /// Shared with the senders of the other parts of a page sent side by side: a request is
    /// journaled and sent once it has a slot, and not at all once any part stopped.
    var inFlight: SyncUpInFlight.Part? = nil
    /// The sync up's: told of every request's answer, or that none came; once it trips, nothing
    /// more is sent.
    var breaker: SyncUpBreaker? = nil

    /// The outcomes of a page's writes, and their journal entries (settled once applied).
    struct Results {
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        /// Every journal entry of a record in this page (a record sent again has several).
        var journalIds: [RecordKey: [Int64]] = [:]
        /// Journal entries of attempts the org refused (a row lock, a busy server): nothing of
        /// them was applied, so they go with the page whatever becomes of a later attempt.
        var refusedJournalIds: [Int64] = []
        /// Records an earlier attempt may have applied (an answer lost, then sent again): an
        /// upsert of theirs that matches an existing record may have matched its own first
        /// attempt, so it counts as created, not updated.
        var mayHaveBeenApplied = Set<RecordKey>()
        /// Records as read back by the request that last wrote them (``readBack``): absent for
        /// a record whose read failed, or whose write did not go through such a request.
        var readBack: [RecordKey: JSONObject] = [:]
    }

    func send(_ phases: [[SyncUpRequest]], into results: inout Results) async throws {
        var stop: (any Error)?
        for phase in phases {
            if stop == nil, inFlight?.shared.cause != nil { stop = SyncUpInFlight.Stopped() }
            if stop == nil, let tripped = breaker?.tripped { stop = tripped }
            if stop == nil {
                do {
                    try await checkBudget()
                } catch {
                    stop = error
                    inFlight?.shared.stop(because: error)
                }
            }
            guard stop == nil else { break }
            var ready: [SyncUpRequest] = []
            for request in phase {
                let (resolved, unsent) = resolveLinks(request, outcomes: results.outcomes)
                results.outcomes.merge(unsent) { $1 }
                if let resolved { ready.append(resolved) }
            }
            // Each request is journaled just before it leaves, so a run that dies leaves at most
            // the requests in flight to reconcile. After a fatal answer (the daily limit, a
            // refused login) nothing more is sent, but the requests in flight are waited for.
            var next = 0
            await withTaskGroup(of: Sent.self) { group in
                func startNext() {
                    if stop == nil, let tripped = breaker?.tripped { stop = tripped }
                    guard stop == nil, next < ready.count else { return }
                    let request = ready[next]
                    next += 1
                    group.addTask {
                        guard let inFlight else { return await journalAndExecute(request) }
                        await inFlight.awaitTurn()
                        let shared = inFlight.shared
                        return await shared.limiter.run {
                            inFlight.passTurn()
                            let unsent = { Dictionary(uniqueKeysWithValues: request.operations.map { ($0.key, SyncUpOutcome.notSent) }) }
                            if Task.isCancelled {
                                shared.stop(because: CancellationError())
                                return Sent(outcomes: unsent(), fatal: CancellationError())
                            }
                            if shared.cause != nil { return Sent(outcomes: unsent(), fatal: SyncUpInFlight.Stopped()) }
                            let sent = await journalAndExecute(request)
                            if let fatal = sent.fatal { shared.stop(because: fatal) }
                            return sent
                        }
                    }
                }
                for _ in 0..<max(1, maxInFlight) { startNext() }
                while let sent = await group.next() {
                    for (key, id) in sent.journalIds {
                        let refused = Set(results.refusedJournalIds)
                        if sent.retried || results.journalIds[key, default: []].contains(where: { !refused.contains($0) }) {
                            results.mayHaveBeenApplied.insert(key)
                        }
                        results.journalIds[key, default: []].append(id)
                        if let error = sent.outcomes[key]?.error, error.code != SyncUpError.answerLost { results.refusedJournalIds.append(id) }
                        // A record written again keeps no read of an earlier write.
                        results.readBack[key] = sent.readBack[key]
                    }
                    results.outcomes.merge(sent.outcomes) { $1 }
                    // A part's own fatal answer wins over another part's stop.
                    if let fatal = sent.fatal, stop == nil || (stop is SyncUpInFlight.Stopped && !(fatal is SyncUpInFlight.Stopped)) {
                        stop = fatal
                    }
                    startNext()
                }
            }
        }
        if let stop { throw stop }
    }

    /// A value the closures of one request share (a request's last journal stamp, whether its Bulk
    /// job started): a class, so escaping closures hold a reference and not a copy of the lock.
    final class Shared<Value: Sendable>: Sendable {
        private let stored: Mutex<Value>

        init(_ value: Value) {
            stored = Mutex(value)
        }

        var value: Value {
            get { stored.withLock { $0 } }
            set { stored.withLock { $0 = newValue } }
        }
    }

    /// What became of one request.
    struct Sent: Sendable {
        var journalIds: [RecordKey: Int64] = [:]
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        var readBack: [RecordKey: JSONObject] = [:]
        /// Sent more than once by the client (a retry after a refusal, a lost answer or a re-login).
        var retried = false
        /// An error that must stop the sync up.
        var fatal: (any Error)?
    }

    /// The org's answer to one request: each write's outcome, and the records read back after.
    struct Answer: Sendable {
        var outcomes: [RecordKey: SyncUpOutcome]
        var readBack: [RecordKey: JSONObject] = [:]
    }

    /// A request that must stop the sync up, with what is known of its writes.
    struct Stopped: Error {
        var outcomes: [RecordKey: SyncUpOutcome]
        var cause: any Error
    }

    func journalAndExecute(_ request: SyncUpRequest) async -> Sent {
        var sent = Sent()
        var ticket = SyncUpBreaker.Ticket(probe: false)
        if let breaker {
            let admitted = await breaker.admit()
            // While it waited, the org may have stopped answering, or another part stopped.
            let stop: (any Error)? = admitted == nil ? breaker.tripped ?? SyncUpInFlight.Stopped()
                : Task.isCancelled ? CancellationError() : inFlight?.shared.cause.map { _ in SyncUpInFlight.Stopped() }
            if let admitted { ticket = admitted }
            if let stop {
                if admitted != nil { breaker.withdrawn(ticket) }
                if stop is CancellationError { inFlight?.shared.stop(because: stop) }
                sent.outcomes = Dictionary(uniqueKeysWithValues: request.operations.map { ($0.key, .notSent) })
                sent.fatal = stop
                return sent
            }
        }
        let stamped: Int64
        do {
            (sent.journalIds, stamped) = try await journal(request.operations)
        } catch {
            breaker?.withdrawn(ticket)
            sent.fatal = error
            return sent
        }
        // The attempt that leaves (late, or retried) is the one the org may apply: the journal's
        // window follows it whenever it leaves later than the stamp's margin allows.
        let ids = Array(sent.journalIds.values)
        let lastStamp = Shared(stamped)
        let attempts = Shared(0)
        let restamp: @Sendable () async throws -> Void = { [self] in
            attempts.value += 1
            let times = await sendTimes()
            guard times.sentAt - lastStamp.value > Self.stampMarginMs / 2 else { return }
            try await store.journal.restamp(ids: ids, sentAt: times.sentAt, serverSentAt: times.serverSentAt, settledBy: times.settledBy)
            lastStamp.value = times.sentAt
        }
        do {
            // A Bulk job's journal follows its job id, not a window; its polls leave late by design.
            let answer: Answer
            if request.isBulk {
                answer = try await execute(request, journalIds: sent.journalIds, ticket: ticket)
            } else {
                let journalIds = sent.journalIds
                answer = try await RequestAttempts(beforeSend: restamp).run {
                    try await execute(request, journalIds: journalIds, ticket: ticket)
                }
                sent.retried = attempts.value > 1
            }
            (sent.outcomes, sent.readBack) = (answer.outcomes, answer.readBack)
        } catch let stopped as Stopped {
            sent.outcomes = stopped.outcomes
            sent.fatal = stopped.cause
        } catch let error as OrgClientError {
            // The org refused the request before applying any of it.
            sent.outcomes = Dictionary(uniqueKeysWithValues: request.operations.map { ($0.key, .notSent) })
            sent.fatal = error
        } catch {
            // Cancelled, or the store failed: whether the org applied it is unknown.
            sent.outcomes = Dictionary(uniqueKeysWithValues: request.operations.map { ($0.key, .uncertain("\(error)")) })
            sent.fatal = error
        }
        return sent
    }
}
