@testable import Connectors
import Testing

/// The org's clock from whole-second `Date` headers.
struct ServerClockEstimateTests {
    @Test func answersNarrowTheOffsetToTheFastestRoundTrip() {
        var clock = ServerClockEstimate()
        #expect(clock.offset == 0, "no answer yet: our clock")
        // The org is 10.4 s ahead. A slow answer (sent at 0, read 900 ms later, dated 10 s) allows
        // offsets from 9.1 s to 11 s; reading its header alone said 9.1 s.
        clock.observe(date: 10_000, sentAt: 0, receivedAt: 900)
        #expect(clock.offset >= 9_100 && clock.offset <= 11_000)
        // Quick answers read just after and just before a second boundary pin it down.
        clock.observe(date: 15_000, sentAt: 4_601, receivedAt: 4_611)
        clock.observe(date: 15_000, sentAt: 5_588, receivedAt: 5_598)
        #expect(abs(clock.offset - 10_400) <= 20, "\(clock.offset)")
        // A later slow answer does not pull it away.
        clock.observe(date: 30_000, sentAt: 19_000, receivedAt: 21_500)
        #expect(abs(clock.offset - 10_400) <= 20, "\(clock.offset)")
    }

    @Test func aMovedOrgClockStartsTheEstimateAgain() {
        var clock = ServerClockEstimate()
        clock.observe(date: 10_000, sentAt: 0, receivedAt: 10)
        clock.observe(date: 3_610_000, sentAt: 1_000, receivedAt: 1_010)
        #expect(abs(clock.offset - 3_609_500) <= 500, "an hour ahead now: \(clock.offset)")
    }
}
