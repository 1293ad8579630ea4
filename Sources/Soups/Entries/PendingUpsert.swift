import Synchronization

/// A write queued on the store's writer by ``SoupStore/startUpsert(_:externalIdPath:)``: writes
/// start in the order they were queued, one after the other, with no task hop between them.
public final class PendingUpsert: Sendable {
    private enum State {
        case running([CheckedContinuation<StoredEntries, Error>])
        case finished(Result<StoredEntries, Error>)
    }
    private let state = Mutex(State.running([]))

    init() {}

    /// The entries as stored, once the write has committed; throws its error.
    public func value() async throws -> StoredEntries {
        try await withCheckedThrowingContinuation { continuation in
            let finished: Result<StoredEntries, Error>? = state.withLock { state in
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

    func finish(_ result: Result<StoredEntries, Error>) {
        let waiting: [CheckedContinuation<StoredEntries, Error>] = state.withLock { state in
            guard case .running(let waiting) = state else { return [] }
            state = .finished(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }
}
