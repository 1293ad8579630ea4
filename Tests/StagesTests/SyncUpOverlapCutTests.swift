import Testing

@testable import Stages

/// Where a page of several requests is cut into parts sent and saved side by side: the parts
/// as even in writes as the requests allow, so each part's save hides behind the next's writes.
struct SyncUpOverlapCutTests {
    @Test func sevenRequestsOfTreesSplitIntoThreeEvenParts() {
        // 1,000 trees of 1 + 5: six full Composite requests and one of 40 trees.
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 960, count: 6) + [240]) == [2, 4])
    }

    @Test func aSmallLastRequestStillMakesAPartOfItsOwn() {
        // Two full requests and a small one: three parts end sooner than two of 960 and 1,020.
        #expect(SyncUpEngine.quickestCut(writes: [960, 960, 60]) == [1, 2])
        #expect(SyncUpEngine.quickestCut(writes: [960, 960]) == [1])
    }

    @Test func noMoreThanThreeParts() {
        let cut = SyncUpEngine.quickestCut(writes: Array(repeating: 1000, count: 12))
        #expect(cut == [4, 8])
        #expect(cut.count < SyncUpEngine.overlapParts)
    }
}
