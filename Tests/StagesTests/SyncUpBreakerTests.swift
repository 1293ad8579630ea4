import Connectors
@testable import Stages
import Synchronization
import Testing

/// The breaker of a sync up on a clock the test moves: a burst of timeouts shorter than
/// `stopAfterSilenceSeconds` never stops the stage however many probes it takes, an org silent
/// for longer does once three probes in a row went unanswered, and any answer starts over.
@Suite struct SyncUpBreakerTests {
    /// A clock that moves only when told to, or when the breaker pauses.
    final class ManualClock: Sendable {
        private let time = Mutex(Duration.zero)
        var now: Duration { time.withLock { $0 } }
        func advance(_ duration: Duration) { time.withLock { $0 += duration } }
        var breakerClock: BreakerClock { BreakerClock(now: { self.now }, sleep: { self.advance($0) }) }
    }

    static let timedOut = OrgClientError.uncertain("POST /composite: timed out")

    /// Admits a request, lets it take `seconds` and fails it without an answer; the stop, if any.
    static func timeOut(_ breaker: SyncUpBreaker, _ clock: ManualClock, after seconds: Int = 10) async throws -> (probe: Bool, stop: StageFailure?) {
        let ticket = try #require(await breaker.admit())
        clock.advance(.seconds(seconds))
        return (ticket.probe, breaker.failed(ticket, timedOut))
    }

    @Test func probesGoOnUntilTheOrgHasBeenSilentLongEnough() async throws {
        let clock = ManualClock()
        let breaker = SyncUpBreaker(threshold: 5, silence: .seconds(120), clock: clock.breakerClock)
        for _ in 0..<5 {
            let (probe, stop) = try await Self.timeOut(breaker, clock)
            #expect(!probe && stop == nil)
        }
        // 50 s of silence: the three probes go unanswered, but a minute of timeouts is no outage.
        var probes = 0
        while breaker.tripped == nil {
            let (probe, _) = try await Self.timeOut(breaker, clock)
            #expect(probe, "once suspect, every request is a probe")
            probes += 1
            #expect(probes < 20)
        }
        // Probes of 10 s with pauses of 0.5, 1, 2, 4, 8 s and 8 s after: silent 120 s at the sixth.
        #expect(probes == 6, "\(probes) probes")
        #expect(clock.now >= .seconds(120) && clock.now < .seconds(130), "\(clock.now)")
        let message = breaker.tripped?.message ?? ""
        #expect(message.hasPrefix("the org stopped answering: 11 requests in a row timed out or lost their connection, nothing answered for 1"), "\(message)")
        #expect(await breaker.admit() == nil, "nothing more leaves")
    }

    @Test func anAnswerClearsTheSuspicionAndTheSilence() async throws {
        let clock = ManualClock()
        let breaker = SyncUpBreaker(threshold: 2, silence: .seconds(60), clock: clock.breakerClock)
        for _ in 0..<4 { _ = try await Self.timeOut(breaker, clock) }
        // The org answers the third request sent alone: requests go side by side again.
        let probe = try #require(await breaker.admit())
        #expect(probe.probe)
        clock.advance(.seconds(1))
        breaker.answered(probe)
        #expect(try #require(await breaker.admit()).probe == false)
        // A new spell counts its silence from that answer: 60 s, not the 40 s before it as well.
        var sent = 0
        while breaker.tripped == nil {
            _ = try await Self.timeOut(breaker, clock)
            sent += 1
        }
        #expect(sent >= 5, "two in a row, then probes until 60 s have passed: \(sent)")
    }

    @Test func withoutASilenceThreeProbesDecide() async throws {
        let clock = ManualClock()
        let breaker = SyncUpBreaker(threshold: 3, silence: .zero, clock: clock.breakerClock)
        var results: [Bool] = []
        while breaker.tripped == nil { results.append(try await Self.timeOut(breaker, clock, after: 1).probe) }
        #expect(results == [false, false, false, true, true, true])
    }

    @Test func aReadWaitsItsTurnAndCounts() async throws {
        let clock = ManualClock()
        let breaker = SyncUpBreaker(threshold: 1, silence: .zero, clock: clock.breakerClock)
        _ = try await Self.timeOut(breaker, clock)
        for _ in 0..<3 {
            await #expect(throws: OrgClientError.self) { try await breaker.read { () async throws -> Int in throw Self.timedOut } }
        }
        #expect(breaker.tripped?.message.hasPrefix("the org stopped answering: 4 requests in a row") == true)
        // Once tripped, a read still goes (what the page wrote is dated and saved).
        #expect(try await breaker.read { 7 } == 7)
    }
}
