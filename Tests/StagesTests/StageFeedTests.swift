import JSON
import Synchronization
import Testing

@testable import Stages

@Suite struct StageFeedTests {
    static func batch(_ range: Range<Int>) -> [JSONValue] { range.map { ["n": .integer(Int64($0))] } }

    @Test func aReaderKeepingUpTakesRecordsFromMemoryAcrossBatches() async throws {
        let feed = StageFeed()
        await feed.started("p")
        await feed.appended("p", records: Self.batch(0..<3000), last: 3000)
        await feed.appended("p", records: Self.batch(3000..<6000), last: 6000)
        let reader = StageFeed.Reader(feed: feed, stage: "c")
        #expect(try await reader.records(of: "p", after: 2000, limit: 2500) == Self.batch(2000..<4500))
        #expect(try await reader.records(of: "p", after: 5000, limit: 5000) == Self.batch(5000..<6000))
        #expect(try await reader.records(of: "p", after: 6000, limit: 10) == nil)
        // Old batches leave memory: they are read from the store instead.
        for end in stride(from: 9000, through: 30000, by: 3000) {
            await feed.appended("p", records: Self.batch(end - 3000..<end), last: Int64(end))
        }
        #expect(try await reader.records(of: "p", after: 0, limit: 10) == nil)
        #expect(try await reader.records(of: "p", after: 27000, limit: 10) == Self.batch(27000..<27010))
    }

    @Test func aProducerWaitsForItsSlowestReaderOnlyWhileItReads() async throws {
        let feed = StageFeed()
        await feed.started("p")
        let reader = StageFeed.Reader(feed: feed, stage: "c")
        _ = try await reader.records(of: "p", after: 0, limit: 1000)
        await feed.appended("p", records: Self.batch(0..<20000), last: 20000)
        let throttle = ThrottleProbe.start(feed, "p")
        // 20,000 ahead of the reader, then 19,000: held until the reader moves within 15,000.
        #expect(try await !throttle.hasReturned())
        _ = try await reader.records(of: "p", after: 1000, limit: 1000)
        #expect(try await !throttle.hasReturned())
        _ = try await reader.records(of: "p", after: 6000, limit: 1000)
        await throttle.wait()

        await feed.appended("p", records: Self.batch(20000..<40000), last: 40000)
        let releasedByFinishing = Task { await feed.throttle("p"); return true }
        await reader.finishedReading("p")
        #expect(await releasedByFinishing.value)

        _ = try await reader.records(of: "p", after: 0, limit: 1000)
        let releasedByEnding = Task { await feed.throttle("p"); return true }
        await feed.readerEnded("c")
        #expect(await releasedByEnding.value)
    }

    @Test func aStreamedDatasetStaysInMemoryUntilItsReaderIsPastIt() async throws {
        let feed = StageFeed(streamed: ["p": "c"])
        #expect(feed.isStreamed("p") && !feed.isStreamed("q"))
        await feed.started("p")
        // Held from the start, before the reader has asked for anything.
        await feed.appended("p", records: Self.batch(0..<16000), last: nil)
        let throttle = ThrottleProbe.start(feed, "p")
        #expect(try await !throttle.hasReturned())
        // Far more than a stored dataset keeps in memory, and none of it is dropped unread.
        for end in stride(from: 17000, through: 40000, by: 1000) {
            await feed.appended("p", records: Self.batch(end - 1000..<end), last: nil)
        }
        let reader = StageFeed.Reader(feed: feed, stage: "c")
        var read: [JSONValue] = []
        while let records = try await reader.records(of: "p", after: Int64(read.count), limit: 3000), !records.isEmpty {
            read += records
        }
        // Caught up: nothing more yet, and no reason to read the store.
        #expect(try await reader.records(of: "p", after: 40000, limit: 10) == [])
        #expect(read == Self.batch(0..<40000))
        await throttle.wait()
        // Batches the reader is past have left memory: asking for them again is a defect, not a
        // silent read of the (empty) store.
        await #expect(throws: StageFailure.self) { try await reader.records(of: "p", after: 0, limit: 10) }
        // Once the reader has ended, nothing is held for it any more.
        await feed.readerEnded("c")
        await feed.appended("p", records: Self.batch(40000..<60000), last: nil)
        await feed.throttle("p")
    }
}

/// A producer's `throttle` call running in the background, to see whether it is held.
final class ThrottleProbe: Sendable {
    private let returned = Atomic(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    static func start(_ feed: StageFeed, _ name: String) -> ThrottleProbe {
        let probe = ThrottleProbe()
        probe.task.withLock { task in
            task = Task {
                await feed.throttle(name)
                probe.returned.store(true, ordering: .sequentiallyConsistent)
            }
        }
        return probe
    }

    /// Whether the call has returned, 50 ms from now.
    func hasReturned() async throws -> Bool {
        try await Task.sleep(for: .milliseconds(50))
        return returned.load(ordering: .sequentiallyConsistent)
    }

    /// Returns once the call has.
    func wait() async {
        await task.withLock { $0 }?.value
    }
}
