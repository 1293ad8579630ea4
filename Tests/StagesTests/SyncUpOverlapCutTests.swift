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
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 1000, count: 12)) == [4, 8])
    }

    @Test func ofCutsAsQuickTheOneWithFewerParts() {
        // [1 | 1 | 2], [1 | 2 | 1] and [2 | 2] all cost 6: two parts read new dates once less.
        #expect(SyncUpEngine.quickestCut(writes: [1, 1, 1, 1]) == [2])
    }

    @Test func aPageOfOneRequestOrNoneIsNotCut() {
        #expect(SyncUpEngine.quickestCut(writes: []) == [])
        #expect(SyncUpEngine.quickestCut(writes: [960]) == [])
    }

    @Test func aPageOfThousandsOfSingleRecordRequestsIsCutEvenly() {
        // One request a record (`rest`): 3,000 requests, cut in thirds.
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 1, count: 3000)) == [1000, 2000])
    }
}
