import JSON
import Synchronization
import Testing

@testable import Stages

@Suite struct StageFeedTests {
    static func batch(_ range: Range<Int>) -> [JSONValue] { range.map { ["n": .integer(Int64($0))] } }

    @Test func aReaderKeepingUpTakesRecordsFromMemoryAcrossBatches() async {
        let feed = StageFeed()
        await feed.started("p")
        await feed.appended("p", records: Self.batch(0..<3000), last: 3000)
        await feed.appended("p", records: Self.batch(3000..<6000), last: 6000)
        let reader = StageFeed.Reader(feed: feed, stage: "c")
        #expect(await reader.records(of: "p", after: 2000, limit: 2500) == Self.batch(2000..<4500))
        #expect(await reader.records(of: "p", after: 5000, limit: 5000) == Self.batch(5000..<6000))
        #expect(await reader.records(of: "p", after: 6000, limit: 10) == nil)
        // Old batches leave memory: they are read from the store instead.
        for end in stride(from: 9000, through: 30000, by: 3000) {
            await feed.appended("p", records: Self.batch(end - 3000..<end), last: Int64(end))
        }
        #expect(await reader.records(of: "p", after: 0, limit: 10) == nil)
        #expect(await reader.records(of: "p", after: 27000, limit: 10) == Self.batch(27000..<27010))
    }

    @Test func aProducerWaitsForItsSlowestReaderOnlyWhileItReads() async throws {
        let feed = StageFeed()
        await feed.started("p")
        let reader = StageFeed.Reader(feed: feed, stage: "c")
        _ = await reader.records(of: "p", after: 0, limit: 1000)
        await feed.appended("p", records: Self.batch(0..<20000), last: 20000)
        let passed = Atomic(false)
        let released = Task {
            await feed.throttle("p")
            passed.store(true, ordering: .sequentiallyConsistent)
            return true
        }
        // 20,000 ahead of the reader, then 19,000: held until the reader moves within 15,000.
        try await Task.sleep(for: .milliseconds(50))
        let passedEarly = passed.load(ordering: .sequentiallyConsistent)
        #expect(!passedEarly)
        _ = await reader.records(of: "p", after: 1000, limit: 1000)
        try await Task.sleep(for: .milliseconds(50))
        let passedAt1000 = passed.load(ordering: .sequentiallyConsistent)
        #expect(!passedAt1000)
        _ = await reader.records(of: "p", after: 6000, limit: 1000)
        #expect(await released.value)

        await feed.appended("p", records: Self.batch(20000..<40000), last: 40000)
        let releasedByFinishing = Task { await feed.throttle("p"); return true }
        await reader.finishedReading("p")
        #expect(await releasedByFinishing.value)

        _ = await reader.records(of: "p", after: 0, limit: 1000)
        let releasedByEnding = Task { await feed.throttle("p"); return true }
        await feed.readerEnded("c")
        #expect(await releasedByEnding.value)
    }
}
