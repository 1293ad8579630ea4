import AsyncAlgorithms
import Synchronization

/// Elements a producer task makes one at a time, handed to the consumer with no buffer between
/// them: the producer's `yield` returns once the consumer has taken the element (back-pressure
/// through the channel, never by polling), so a stream of records holds one record in flight
/// however slow its reader. When the consumer stops early or goes away, the producer is
/// cancelled; an error the producer throws ends the consumer's iteration with that error.
public struct ProducedSequence<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    /// Ties the producer's lifetime to the sequence and its iterators.
    final class Link: Sendable {
        let channel = AsyncThrowingChannel<Element, any Error>()
        let producer = Mutex<Task<Void, Never>?>(nil)

        deinit {
            producer.withLock { $0?.cancel() }
            channel.finish()
        }
    }

    private let link: Link

    /// Starts `produce` at once; it hands each element to `yield`, which waits for the consumer.
    public init(_ produce: @escaping @Sendable (_ yield: @Sendable (Element) async throws -> Void) async throws -> Void) {
        let link = Link()
        let channel = link.channel
        let task = Task {
            do {
                try await produce { element in
                    try Task.checkCancellation()
                    await channel.send(element)
                    try Task.checkCancellation()
                }
                channel.finish()
            } catch {
                channel.fail(error)
            }
        }
        link.producer.withLock { $0 = task }
        self.link = link
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let link: Link
        var base: AsyncThrowingChannel<Element, any Error>.AsyncIterator

        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(link: link, base: link.channel.makeAsyncIterator())
    }
}
