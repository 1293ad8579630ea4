import Foundation
import Synchronization
import SOQL

/// The emulator's clock: the system clock plus an offset tests move with `POST /emulator/clock`.
/// Dates are truncated to whole seconds like an org's timestamps; request deadlines and injected
/// latency run on ``instant()``, which the offset moves too, so a test that advances the clock
/// makes held requests finish and deadlines pass instead of waiting for them. One instance is
/// shared by the engine and the server's channels, so record dates and the `Date` header of every
/// answer tell the same time.
final class EmulatorClock: Sendable {
    private let offset = Atomic<Int64>(0)

    /// Seconds the clock runs ahead of the system clock.
    var offsetSeconds: Int64 { offset.load(ordering: .relaxed) }

    func advance(bySeconds seconds: Int64) {
        offset.add(seconds, ordering: .relaxed)
    }

    /// Now on the monotonic clock request deadlines are measured on, offset included.
    func instant() -> ContinuousClock.Instant {
        ContinuousClock.now + .seconds(offsetSeconds)
    }

    /// Waits until ``instant()`` is `duration` later: real time passing or the clock advanced,
    /// whichever comes first (looking again every 50 ms at most).
    func sleep(for duration: Duration) async {
        let until = instant() + duration
        while case let left = until - instant(), left > .zero {
            guard (try? await Task.sleep(for: min(left, .milliseconds(50)))) != nil else { return }
        }
    }

    /// Now, in epoch milliseconds, whole seconds.
    func now() -> Int64 {
        (Int64(Date().timeIntervalSince1970) + offsetSeconds) * 1000
    }

    /// Now as an HTTP date (`Wed, 25 Nov 2026 03:37:30 GMT`), as an org's `Date` header gives it.
    func httpDate() -> String {
        let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let milliseconds = now()
        guard let time = SOQLDateTime(epochMilliseconds: milliseconds) else { return "" }
        let dayNumber = milliseconds / 86_400_000
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(((dayNumber % 7) + 7) % 7)]), \(two(time.date.day)) \(months[time.date.month - 1]) \(time.date.year) "
            + "\(two(time.hour)):\(two(time.minute)):\(two(time.second)) GMT"
    }
}
