import Connectors
import Foundation
import Formats
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
    private final class Shared<Value: Sendable>: Sendable {
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
    private struct Sent: Sendable {
        var journalIds: [RecordKey: Int64] = [:]
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        var readBack: [RecordKey: JSONObject] = [:]
        /// Sent more than once by the client (a retry after a refusal, a lost answer or a re-login).
        var retried = false
        /// An error that must stop the sync up.
        var fatal: (any Error)?
    }

    /// The org's answer to one request: each write's outcome, and the records read back after.
    private struct Answer: Sendable {
        var outcomes: [RecordKey: SyncUpOutcome]
        var readBack: [RecordKey: JSONObject] = [:]
    }

    /// A request that must stop the sync up, with what is known of its writes.
    private struct Stopped: Error {
        var outcomes: [RecordKey: SyncUpOutcome]
        var cause: any Error
    }

    private func journalAndExecute(_ request: SyncUpRequest) async -> Sent {
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
            try await store.restampJournal(ids: ids, sentAt: times.sentAt, serverSentAt: times.serverSentAt, settledBy: times.settledBy)
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

    // MARK: Links to new parents

    /// The request with each parent link filled; writes whose parent was not created are taken
    /// out with an error (`nil` request when none is left).
    private func resolveLinks(_ request: SyncUpRequest, outcomes: [RecordKey: SyncUpOutcome]) -> (SyncUpRequest?, [RecordKey: SyncUpOutcome]) {
        var unsent: [RecordKey: SyncUpOutcome] = [:]
        func resolve(_ operations: [SyncUpOperation], referencing sameRequest: Set<RecordKey>,
                     reference: (RecordKey) -> String? = { "@{\($0.referenceId).id}" }) -> [SyncUpOperation] {
            var resolvedOperations: [SyncUpOperation] = []
            resolvedOperations.reserveCapacity(operations.count)
            for operation in operations {
                guard let link = operation.parentLink else {
                    resolvedOperations.append(operation)
                    continue
                }
                var resolved = operation
                if sameRequest.contains(link.parent), let expression = reference(link.parent) {
                    resolved.fields[link.field] = .string(expression)
                    resolved.journalLink = link.field
                } else if let id = outcomes[link.parent]?.acceptedId {
                    resolved.fields[link.field] = .string(id)
                } else if outcomes[link.parent]?.error == nil {
                    unsent[operation.key] = .unresolved("its parent's create is \(outcomes[link.parent]?.isUncertain == true ? "uncertain" : "not confirmed"); sent once the parent is settled")
                    continue
                } else {
                    let reason = outcomes[link.parent]?.error.map { "\($0.code): \($0.message)" } ?? "its outcome is unknown"
                    unsent[operation.key] = .failed(SyncUpError(
                        status: 424, code: "PARENT_NOT_SYNCED", message: "not sent: its parent was not created (\(reason))",
                        fields: [link.field]))
                    continue
                }
                resolved.parentLink = nil
                resolvedOperations.append(resolved)
            }
            return resolvedOperations
        }
        let resolved: SyncUpRequest?
        switch request {
        case .rest(let operation):
            resolved = resolve([operation], referencing: []).first.map(SyncUpRequest.rest)
        case .composite(let operations):
            let kept = resolve(operations, referencing: Set(operations.filter { $0.kind == .create || $0.kind == .upsert }.map(\.key)))
            resolved = kept.isEmpty ? nil : .composite(kept)
        case .collection(let call, let operations):
            let kept = resolve(operations, referencing: [])
            resolved = kept.isEmpty ? nil : .collection(call, kept)
        case .compositeCollections(let parts):
            // A new parent in an earlier call of this request: `@{c<call>[<position>].id}`.
            var positions: [RecordKey: String] = [:]
            for (index, part) in parts.enumerated() where part.parents {
                for (position, operation) in part.operations.enumerated() where operation.kind == .create || operation.kind == .upsert {
                    positions[operation.key] = "@{c\(index)[\(position)].id}"
                }
            }
            var kept = parts
            for index in kept.indices {
                kept[index].operations = resolve(kept[index].operations, referencing: Set(positions.keys), reference: { positions[$0] })
            }
            // Parents' calls keep their places (children's references count on them); empty children's calls go.
            kept = kept.filter { $0.parents || !$0.operations.isEmpty }
            resolved = kept.allSatisfy(\.operations.isEmpty) ? nil : .compositeCollections(kept)
        case .graph(let graphs):
            let kept = graphs.map { resolve($0, referencing: Set($0.filter { $0.kind == .create || $0.kind == .upsert }.map(\.key))) }
                .filter { !$0.isEmpty }
            resolved = kept.isEmpty ? nil : .graph(kept)
        case .bulk(let object, let kind, let field, let operations):
            let kept = resolve(operations, referencing: [])
            resolved = kept.isEmpty ? nil : .bulk(object: object, kind: kind, externalIdField: field, kept)
        }
        return (resolved, unsent)
    }

    // MARK: Journal

    /// How much later than its stamp a write may leave without a new stamp: settle-by times
    /// carry it as a margin, and an attempt leaving more than half of it late is stamped again.
    static let stampMarginMs: Int64 = 200

    /// How long after the client gave up a request may still reach the org: bytes written just
    /// before the timeout travel on (network latency, a busy server reading late), and the org's
    /// deadline runs from their arrival. Without it a create arriving a moment after the timeout
    /// could be applied after a reconciliation that found nothing had decided to send it again.
    static let arrivalSlackMs: Int64 = 2000

    /// From a write's stamp to when the org can no longer apply it: the client's timeout, the
    /// org's deadline, and both margins above.
    static func settlingMs(_ client: any OrgClient) -> Int64 {
        Int64(client.writeSettlingSeconds * 1000) + stampMarginMs + arrivalSlackMs
    }

    /// A write leaving now: when, on our clock and (as far as we can tell) the org's, and until
    /// when the org may still apply it.
    private func sendTimes() async -> (sentAt: Int64, serverSentAt: Int64, settledBy: Int64) {
        let now = Timestamp.milliseconds(Date())
        let offset = await client.serverClockOffset()
        return (now, now + offset, now + Self.settlingMs(client))
    }

    /// Records a request's writes before it leaves: what is sent, when (on our clock and, as far
    /// as we can tell, the org's), until when the org may still apply it, and the parent a write
    /// refers to by reference within the request.
    /// Writes of a Bulk job carry its id (`bulkJobId`): a resumed run reads that job's results.
    func journal(_ operations: [SyncUpOperation], bulkJobId: String? = nil) async throws -> (ids: [RecordKey: Int64], sentAt: Int64) {
        guard !operations.isEmpty else { return ([:], Timestamp.milliseconds(Date())) }
        let times = await sendTimes()
        // Only writes linked to their parent need to find it among the others.
        let byKey = operations.contains { $0.journalLink != nil }
            ? Dictionary(operations.map { ($0.key, $0) }, uniquingKeysWith: { $1 }) : [:]
        let entries = operations.map { operation in
            var payload = operation.fields
            var link: SyncJournalEntry.Link?
            if let field = operation.journalLink, let parent = byKey[RecordKey(tree: operation.key.tree, child: nil)] {
                payload[field] = nil
                link = SyncJournalEntry.Link(field: field, soupName: parent.soup, entryId: parent.entryId)
            }
            return SyncJournalEntry(syncName: syncName, soupName: operation.soup, entryId: operation.entryId,
                                    operation: operation.kind.journalOperation, objectType: operation.objectType,
                                    recordId: operation.kind == .upsert ? operation.externalIdValue : operation.recordId,
                                    payload: payload, sentAt: times.sentAt, serverSentAt: times.serverSentAt, settledBy: times.settledBy,
                                    link: link, bulkJobId: bulkJobId)
        }
        let ids = try await store.appendToJournal(entries)
        return (Dictionary(zip(operations.lazy.map(\.key), ids), uniquingKeysWith: { $1 }), times.sentAt)
    }

    // MARK: Sending

    /// Sends one request; tells the breaker how it ended with the request's `ticket`.
    private func execute(_ request: SyncUpRequest, journalIds: [RecordKey: Int64], ticket: SyncUpBreaker.Ticket) async throws -> Answer {
        let operations = request.operations
        do {
            let answer: Answer
            switch request {
            case .rest(let operation): answer = Answer(outcomes: [operation.key: try await sendOne(operation)])
            case .composite(let operations): answer = Answer(outcomes: try await sendComposite(operations))
            case .collection(let call, let operations): answer = Answer(outcomes: try await sendCollection(call, operations))
            case .compositeCollections(let parts): answer = try await sendCompositeCollections(parts)
            case .graph(let graphs): answer = Answer(outcomes: try await sendGraphs(graphs))
            case .bulk(let object, let kind, let field, let operations):
                answer = Answer(outcomes: try await sendBulk(object, kind, field, operations, journalIds: operations.compactMap { journalIds[$0.key] }))
            }
            breaker?.answered(ticket)
            return answer
        } catch let error as OrgClientError {
            if let noAnswer = SyncUpBreaker.isNoAnswer(error) {
                if let tripped = breaker?.failed(ticket, noAnswer) {
                    // This request's own records are decided as any lost answer's; nothing more leaves.
                    throw Stopped(outcomes: markAll(operations, Self.outcome(of: noAnswer)).outcomes, cause: tripped)
                }
            } else if case .invalidConfiguration = error {
                breaker?.withdrawn(ticket)
            } else {
                breaker?.answered(ticket)
            }
            switch error {
            case .requestLimitExceeded, .authenticationFailed: throw error
            case .uncertain, .gaveUp:
                return markAll(operations, Self.outcome(of: error))
            case .invalidConfiguration(let message):
                return markAll(operations, .failed(SyncUpError(status: 0, code: "INVALID_CONFIGURATION", message: message)))
            case .invalidResponse(let message):
                // The org answered, so it may have applied the writes: reconciled, never sent blind.
                return markAll(operations, .uncertain(message))
            }
        } catch let error as OrgAPIError {
            breaker?.answered(ticket)
            return markAll(operations, .failed(Self.error(error)))
        } catch {
            breaker?.withdrawn(ticket)
            throw error
        }
    }

    /// The outcome of each write of a request that got no answer: uncertain after a lost answer of
    /// a request not safe to repeat; failed (sent again later) when every attempt was refused or,
    /// for a request safe to repeat, lost. After a lost answer the org may have applied it, so
    /// that attempt is not counted as refused.
    private static func outcome(of noAnswer: OrgClientError) -> SyncUpOutcome {
        switch noAnswer {
        case .gaveUp(let attempts, let last, let answerLost):
            return .failed(SyncUpError(status: 503, code: answerLost ? SyncUpError.answerLost : SyncUpError.retriesExhausted,
                                       message: "no success after \(attempts) attempts: \(last)"))
        case .uncertain(let message), .invalidResponse(let message), .authenticationFailed(let message),
             .requestLimitExceeded(let message), .invalidConfiguration(let message):
            return .uncertain(message)
        }
    }

    private func markAll(_ operations: [SyncUpOperation], _ outcome: SyncUpOutcome) -> Answer {
        Answer(outcomes: Dictionary(uniqueKeysWithValues: operations.map { ($0.key, outcome) }))
    }

    static func error(_ error: OrgAPIError) -> SyncUpError {
        SyncUpError(status: error.status, json: (error.body[0] ?? error.body).objectValue
            ?? ["errorCode": .string(error.errorCode), "message": .string(error.message)])
    }

    private func sendOne(_ operation: SyncUpOperation) async throws -> SyncUpOutcome {
        if let writer { return try await sendOne(operation, through: writer) }
        do {
            switch operation.kind {
            case .create:
                return .succeeded(id: try await client.create(operation.objectType, operation.fields))
            case .upsert:
                let answer = try await client.upsert(operation.objectType, externalIdField: operation.externalIdField ?? "",
                                                     value: operation.externalIdValue ?? "", operation.fields)
                return answer.created == false ? .matched(id: answer.id) : .succeeded(id: answer.id)
            case .update:
                try await client.update(operation.objectType, id: operation.recordId ?? "", operation.fields)
                return .succeeded(id: operation.recordId)
            case .delete:
                try await client.delete(operation.objectType, id: operation.recordId ?? "")
                return .succeeded(id: operation.recordId)
            }
        } catch let error as OrgAPIError {
            return .failed(Self.error(error))
        }
    }

    /// One write through the target's own methods; an error of the target's own fails the record.
    private func sendOne(_ operation: SyncUpOperation, through writer: any SyncUpRecordWriter) async throws -> SyncUpOutcome {
        do {
            switch operation.kind {
            case .create, .upsert:
                var fields = operation.fields
                if let field = operation.externalIdField, let value = operation.externalIdValue { fields[field] = .string(value) }
                return .succeeded(id: try await writer.createOnServer(operation.objectType, fields: fields, org: client))
            case .update:
                try await writer.updateOnServer(operation.objectType, id: operation.recordId ?? "", fields: operation.fields, org: client)
                return .succeeded(id: operation.recordId)
            case .delete:
                try await writer.deleteOnServer(operation.objectType, id: operation.recordId ?? "", org: client)
                return .succeeded(id: operation.recordId)
            }
        } catch let error as OrgAPIError {
            return .failed(Self.error(error))
        } catch let error as OrgClientError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return .failed(SyncUpError(status: 0, code: "TARGET_ERROR", message: "\(error)"))
        }
    }

    private func subrequest(_ operation: SyncUpOperation) -> CompositeSubrequest {
        CompositeSubrequest(method: operation.httpMethod, url: client.apiPath + operation.restPath, referenceId: operation.key.referenceId,
                            body: operation.kind == .delete ? nil : .object(operation.fields))
    }

    private func outcome(_ response: CompositeSubresponse?, for operation: SyncUpOperation) -> SyncUpOutcome {
        guard let response else {
            return .failed(SyncUpError(status: 0, code: "NO_RESPONSE", message: "the org's answer had no entry for this record"))
        }
        if (200..<300).contains(response.httpStatusCode) {
            let id = response.body["id"]?.stringValue ?? operation.recordId
            // An upsert answers 201 when it created the record; 200 (`created: false`) or, in old
            // API versions, 204 when it matched one.
            let matched = operation.kind == .upsert && response.httpStatusCode != 201 && response.body["created"]?.boolValue != true
            return matched ? .matched(id: id) : .succeeded(id: id)
        }
        let first = (response.body[0] ?? response.body).objectValue ?? ["message": .string(response.body.jsonString)]
        return .failed(SyncUpError(status: response.httpStatusCode, json: first))
    }

    private func sendComposite(_ operations: [SyncUpOperation]) async throws -> [RecordKey: SyncUpOutcome] {
        let responses = try await client.composite(operations.map(subrequest), allOrNone: false)
        let byReference = Dictionary(responses.map { ($0.referenceId, $0) }, uniquingKeysWith: { $1 })
        return Dictionary(uniqueKeysWithValues: operations.map { ($0.key, outcome(byReference[$0.key.referenceId], for: $0)) })
    }

    private func sendGraphs(_ graphs: [[SyncUpOperation]]) async throws -> [RecordKey: SyncUpOutcome] {
        let answers = try await client.graph(graphs.map { graph in ("g" + (graph.first?.key.referenceId ?? ""), graph.map(subrequest)) })
        let byGraph = Dictionary(answers.map { ($0.graphId, $0) }, uniquingKeysWith: { $1 })
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for graph in graphs {
            let answer = byGraph["g" + (graph.first?.key.referenceId ?? "")]
            let byReference = Dictionary((answer?.responses ?? []).map { ($0.referenceId, $0) }, uniquingKeysWith: { $1 })
            let rootCause = graph.lazy.compactMap { operation -> SyncUpError? in
                guard let response = byReference[operation.key.referenceId], response.httpStatusCode >= 400 else { return nil }
                let error = self.outcome(response, for: operation).error
                return error?.code == "PROCESSING_HALTED" ? nil : error
            }.first
            for operation in graph {
                if answer?.isSuccessful == true {
                    outcomes[operation.key] = outcome(byReference[operation.key.referenceId], for: operation)
                } else {
                    outcomes[operation.key] = .failed(rootCause ?? SyncUpError(
                        status: 400, code: "PROCESSING_HALTED", message: "the tree's graph was rolled back"))
                }
            }
        }
        return outcomes
    }

    /// The records of a Collections create, update or upsert call.
    private static func collectionRecords(_ operations: [SyncUpOperation]) -> [JSONObject] {
        operations.map { operation -> JSONObject in
            var record: JSONObject = ["attributes": ["type": .string(operation.objectType)]]
            for (name, value) in operation.fields { record[name] = value }
            if operation.kind == .update { record["Id"] = .string(operation.recordId ?? "") }
            if operation.kind == .upsert, let field = operation.externalIdField { record[field] = .string(operation.externalIdValue ?? "") }
            return record
        }
    }

    /// Each record's outcome from its Collections result.
    private static func collectionOutcomes(_ operations: [SyncUpOperation], _ results: [SaveResult]) -> [RecordKey: SyncUpOutcome] {
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for (operation, result) in zip(operations, results) {
            if result.success {
                let id = result.id ?? operation.recordId
                outcomes[operation.key] = operation.kind == .upsert && result.created == false ? .matched(id: id) : .succeeded(id: id)
            } else {
                outcomes[operation.key] = .failed(result.errors.first.map(Self.error)
                    ?? SyncUpError(status: 400, code: "UNKNOWN_ERROR", message: "the org refused the record without saying why"))
            }
        }
        for operation in operations.dropFirst(results.count) {
            outcomes[operation.key] = .failed(SyncUpError(status: 0, code: "NO_RESPONSE", message: "the org's answer had no entry for this record"))
        }
        return outcomes
    }

    private func sendCollection(_ call: SyncUpRequest.CollectionCall, _ operations: [SyncUpOperation]) async throws -> [RecordKey: SyncUpOutcome] {
        let results: [SaveResult]
        let records = Self.collectionRecords(operations)
        switch call {
        case .delete: results = try await client.deleteRecords(ids: operations.map { $0.recordId ?? "" })
        case .create: results = try await client.createRecords(records)
        case .update: results = try await client.updateRecords(records)
        case .upsert(let type, let field): results = try await client.upsertRecords(type, externalIdField: field, records)
        }
        return Self.collectionOutcomes(operations, results)
    }

    /// Collections calls in one Composite request. A children's call whose references cannot be
    /// resolved (a parent of the call failed) is refused whole by the org, nothing applied: the
    /// children of failed parents fail with them, the others go again once their parent's id is known.
    /// The calls are followed by one retrieve per object of ``readBack``, reading the records
    /// written; a retrieve that cannot be resolved (a write of its object failed) reads nothing.
    private func sendCompositeCollections(_ parts: [SyncUpRequest.CollectionPart]) async throws -> Answer {
        let base = client.apiPath + "/composite/sobjects"
        var subrequests = parts.enumerated().map { index, part -> CompositeSubrequest in
            let records: JSONValue = ["allOrNone": false, "records": .array(Self.collectionRecords(part.operations).map(JSONValue.object))]
            switch part.call {
            case .create: return CompositeSubrequest(method: "POST", url: base, referenceId: "c\(index)", body: records)
            case .update: return CompositeSubrequest(method: "PATCH", url: base, referenceId: "c\(index)", body: records)
            case .upsert(let type, let field):
                return CompositeSubrequest(method: "PATCH", url: base + "/\(OrgPath.component(type))/\(OrgPath.component(field))",
                                           referenceId: "c\(index)", body: records)
            case .delete:
                let ids = part.operations.map { OrgPath.component($0.recordId ?? "") }.joined(separator: ",")
                return CompositeSubrequest(method: "DELETE", url: base + "?ids=\(ids)&allOrNone=false", referenceId: "c\(index)")
            }
        }
        let reads = readBackRequests(parts)
        subrequests += reads.map(\.request)
        let responses = try await client.composite(subrequests, allOrNone: false)
        let byReference = Dictionary(responses.map { ($0.referenceId, $0) }, uniquingKeysWith: { $1 })
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for (index, part) in parts.enumerated() {
            guard let response = byReference["c\(index)"] else {
                for operation in part.operations {
                    outcomes[operation.key] = .failed(SyncUpError(status: 0, code: "NO_RESPONSE", message: "the org's answer had no entry for this record"))
                }
                continue
            }
            if (200..<300).contains(response.httpStatusCode), let results = response.body.arrayValue {
                outcomes.merge(Self.collectionOutcomes(part.operations, results.map(SaveResult.init(json:)))) { $1 }
                continue
            }
            let error = SyncUpError(status: response.httpStatusCode,
                                    json: (response.body[0] ?? response.body).objectValue ?? ["message": .string(response.body.jsonString)])
            for operation in part.operations {
                if let link = operation.journalLink, let parent = outcomes[RecordKey(tree: operation.key.tree, child: nil)], !parent.isSuccess {
                    let reason = parent.error.map { "\($0.code): \($0.message)" } ?? "its outcome is unknown"
                    outcomes[operation.key] = .failed(SyncUpError(status: 424, code: "PARENT_NOT_SYNCED",
                                                                  message: "not sent: its parent was not created (\(reason))", fields: [link]))
                } else if operation.journalLink != nil && error.code == "PROCESSING_HALTED" {
                    outcomes[operation.key] = .failed(SyncUpError(status: 424, code: SyncUpError.siblingParentFailed,
                        message: "not applied: a parent of another record of its call failed; sent again with its parent's id"))
                } else {
                    outcomes[operation.key] = .failed(error)
                }
            }
        }
        var readBack: [RecordKey: JSONObject] = [:]
        for read in reads {
            guard let response = byReference[read.request.referenceId], (200..<300).contains(response.httpStatusCode),
                  let records = response.body.arrayValue else { continue }
            // Each record under the id its write was given.
            var byId: [String: JSONObject] = [:]
            for case let record? in records.lazy.map(\.objectValue) { byId[SalesforceId.key(record["Id"])] = record }
            for key in read.keys {
                if let id = outcomes[key]?.acceptedId, let record = byId[SalesforceId.key(.string(id))] { readBack[key] = record }
            }
        }
        return Answer(outcomes: outcomes, readBack: readBack)
    }

    /// One retrieve per object among the calls' writes that ``readBack`` reads, its ids
    /// references to the writes' results (`@{cN[i].id}`), with the records it reads. Updates
    /// are referred to as well: the reference makes the retrieve wait for the write (a Composite
    /// request may otherwise run independent subrequests in any order).
    private func readBackRequests(_ parts: [SyncUpRequest.CollectionPart]) -> [(request: CompositeSubrequest, keys: [RecordKey])] {
        guard !readBack.fields.isEmpty else { return [] }
        var byObject: [(type: String, field: String, ids: [String], keys: [RecordKey])] = []
        let read = readBack.fields(after: parts.map { ($0.call, $0.objectType, $0.parents) })
        for (index, part) in parts.enumerated() {
            guard let field = read[index] else { continue }
            let group = byObject.firstIndex { $0.type == part.objectType } ?? byObject.count
            if group == byObject.count { byObject.append((part.objectType, field, [], [])) }
            for (position, operation) in part.operations.enumerated() {
                byObject[group].ids.append("@{c\(index)[\(position)].id}")
                byObject[group].keys.append(operation.key)
            }
        }
        return byObject.enumerated().map { index, read in
            let fields = read.field == "Id" ? ["Id"] : ["Id", read.field]
            return (client.retrieveSubrequest(read.type, ids: read.ids, fields: fields, referenceId: "r\(index)"), read.keys)
        }
    }

    private func sendBulk(_ object: String, _ kind: SyncUpOperation.Kind, _ field: String?, _ operations: [SyncUpOperation],
                          journalIds: [Int64]) async throws -> [RecordKey: SyncUpOutcome] {
        let table = SyncUpBulkTable(kind: kind, externalIdField: field,
                                    records: operations.map { ($0.fields, $0.recordId, $0.externalIdValue) })
        let (columns, rows) = (table.columns, table.rows)
        let operationName = kind == .create ? "insert" : kind.rawValue
        let store = store
        let started = Shared(false)
        let result: BulkIngestResult
        do {
            result = try await client.bulkIngest(object: object, operation: operationName, externalIdField: kind == .upsert ? field : nil,
                                                 columns: columns, rows: rows) { jobId in
                try await store.setBulkJob(jobId, forJournalIds: journalIds)
                started.value = true
            }
        } catch let error as OrgClientError where started.value {
            // The job exists and may have run: the next run reads its results.
            let outcomes = Dictionary(uniqueKeysWithValues: operations.map { ($0.key, SyncUpOutcome.uncertain("Bulk job: \(error)")) })
            if case .requestLimitExceeded = error { throw Stopped(outcomes: outcomes, cause: error) }
            return outcomes
        } catch let error as OrgAPIError where started.value {
            return Dictionary(uniqueKeysWithValues: operations.map { ($0.key, .uncertain("Bulk job: \(error.description)")) })
        }
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for (operation, row) in zip(operations, result.rows) {
            outcomes[operation.key] = Self.bulkOutcome(row, of: operation, in: result)
        }
        return outcomes
    }

    /// A record's outcome from its row of a Bulk job's results.
    static func bulkOutcome(_ row: BulkIngestResult.Row, of operation: SyncUpOperation, in result: BulkIngestResult) -> SyncUpOutcome {
        bulkOutcome(row, kind: operation.kind, recordId: operation.recordId, in: result)
    }

    /// ``bulkOutcome(_:of:in:)`` of an operation known by its kind and record id.
    static func bulkOutcome(_ row: BulkIngestResult.Row, kind: SyncUpOperation.Kind, recordId: String?, in result: BulkIngestResult) -> SyncUpOutcome {
        // A job that completed processed every row: one its results do not account for may have been applied.
        if !row.processed && result.state == "JobComplete" {
            return .uncertain("Bulk job \(result.jobId) completed, but its results have no row matching this record's")
        }
        if !row.processed {
            return .failed(SyncUpError(status: 0, code: "NOT_PROCESSED",
                message: "Bulk job \(result.jobId) ended \(result.state) before processing this record\(result.errorMessage.map { ": \($0)" } ?? "")"))
        }
        if let error = row.error { return .failed(SyncUpError(bulkError: error)) }
        let id = row.id ?? recordId
        return kind == .upsert && !row.created ? .matched(id: id) : .succeeded(id: id)
    }
}
