import JSON
import Soups

/// A stage's input batches, the next one read (and parsed) while the stage works on the current
/// one, so reading its input and doing its work use both cores.
public struct PrefetchingBatches: AsyncSequence, Sendable {
    public typealias Element = [JSONValue]

    let base: DatasetBatches

    /// Holds the underlying iterator so a prefetch task can advance it.
    actor Source {
        var iterator: DatasetBatches.AsyncIterator

        init(_ iterator: DatasetBatches.AsyncIterator) {
            self.iterator = iterator
        }

        /// One call at a time (the iterator keeps at most one read ahead).
        func next() async throws -> [JSONValue]? {
            var advancing = iterator
            let batch = try await advancing.next()
            iterator = advancing
            return batch
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let source: Source
        var pending: Task<[JSONValue]?, Error>?

        public mutating func next() async throws -> [JSONValue]? {
            let source = source
            let current = pending ?? Task { try await source.next() }
            let batch = try await withTaskCancellationHandler {
                try await current.value
            } onCancel: {
                current.cancel()
            }
            pending = batch == nil ? nil : Task { try await source.next() }
            return batch
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: Source(base.makeAsyncIterator()), pending: nil)
    }
}
