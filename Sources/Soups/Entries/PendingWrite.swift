import Synchronization

/// A write queued on the store's writer (``SoupStore/startUpsert(_:externalIdPath:)``,
/// ``SoupStore/startApply(_:after:)``): writes start in the order they were queued, one after the
/// other, with no task hop between them.
public final class PendingWrite<Value: Sendable>: Sendable {
    private enum State {
        case running([CheckedContinuation<Value, Error>])
        case finished(Result<Value, Error>)
    }
    private let state = Mutex(State.running([]))
    /// Called once the write's value is had: ends the loan of what the write read (``WriterLoan``).
    private let settled: (@Sendable () -> Void)?

    init(settled: (@Sendable () -> Void)? = nil) {
        self.settled = settled
    }

    /// What the write gave, once it has committed; throws its error.
    public func value() async throws -> Value {
        defer { settled?() }
        return try await withCheckedThrowingContinuation { continuation in
            let finished: Result<Value, Error>? = state.withLock { state in
                switch state {
                case .finished(let result): return result
                case .running(var waiting):
                    waiting.append(continuation)
                    state = .running(waiting)
                    return nil
                }
            }
            if let finished { continuation.resume(with: finished) }
        }
    }

    /// How the write ended: `nil` while it runs.
    var succeeded: Bool? {
        state.withLock { state in
            guard case .finished(let result) = state else { return nil }
            if case .success = result { return true }
            return false
        }
    }

    func finish(_ result: Result<Value, Error>) {
        let waiting: [CheckedContinuation<Value, Error>] = state.withLock { state in
            guard case .running(let waiting) = state else { return [] }
            state = .finished(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }
}

/// An upsert queued by ``SoupStore/startUpsert(_:externalIdPath:)``: the entries as stored.
public typealias PendingUpsert = PendingWrite<StoredEntries>
