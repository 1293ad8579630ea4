import Connectors
import JSON
import Soups

/// One request sent through its transport, and what an unanswered one means for its writes.
extension SyncUpSender {
    /// Sends one request; tells the breaker how it ended with the request's `ticket`.
    func execute(_ request: SyncUpRequest, journalIds: [RecordKey: Int64], ticket: SyncUpBreaker.Ticket) async throws -> Answer {
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
    static func outcome(of noAnswer: OrgClientError) -> SyncUpOutcome {
        switch noAnswer {
        case .gaveUp(let attempts, let last, let answerLost):
            return .failed(SyncUpError(status: 503, code: answerLost ? SyncUpError.answerLost : SyncUpError.retriesExhausted,
                                       message: "no success after \(attempts) attempts: \(last)"))
        case .uncertain(let message), .invalidResponse(let message), .authenticationFailed(let message),
             .requestLimitExceeded(let message), .invalidConfiguration(let message):
            return .uncertain(message)
        }
    }

    func markAll(_ operations: [SyncUpOperation], _ outcome: SyncUpOutcome) -> Answer {
        Answer(outcomes: Dictionary(uniqueKeysWithValues: operations.map { ($0.key, outcome) }))
    }

    static func error(_ error: OrgAPIError) -> SyncUpError {
        SyncUpError(status: error.status, json: (error.body[0] ?? error.body).objectValue
            ?? ["errorCode": .string(error.errorCode), "message": .string(error.message)])
    }
}
