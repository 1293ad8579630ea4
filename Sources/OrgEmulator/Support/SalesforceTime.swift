import Foundation
import Synchronization
import SOQL

/// Timestamps the way an org writes them — UTC, `2024-01-31T12:00:00.000+0000` — on top of the one
/// date-time implementation, ``SOQLDateTime``.
public enum SalesforceTime {
    /// `2024-01-31T12:00:00.000+0000` for epoch milliseconds.
    public static func format(_ milliseconds: Int64) -> String {
        // SOQLDateTime writes UTC as `…Z`; an org writes `…+0000`.
        String((SOQLDateTime(epochMilliseconds: milliseconds)?.description ?? "1970-01-01T00:00:00.000Z").dropLast()) + "+0000"
    }

    /// `2024-01-31` for epoch milliseconds.
    public static func formatDate(_ milliseconds: Int64) -> String {
        String(format(milliseconds).prefix(10))
    }

    /// Parses `2024-01-31T12:00:00Z`, `…T12:00:00.000+0000`, `…+00:00`, a space for the `T`, or a
    /// date `2024-01-31` (midnight UTC) into epoch milliseconds.
    public static func parse(_ text: String) -> Int64? {
        var characters = Array(text.trimmingCharacters(in: .whitespaces))
        if characters.count == 10 { return SOQLDate(parsing: String(characters)).map { $0.dayNumber * 86_400_000 } }
        if characters.count > 10 && characters[10] == " " { characters[10] = "T" }
        return SOQLDateTime(parsing: String(characters), requiringOffset: false)?.epochMilliseconds
    }
}

/// The emulator's clock: the system clock plus an offset tests move with `POST /emulator/clock`,
/// truncated to whole seconds like an org's timestamps. One instance is shared by the engine and
/// the server's channels, so record dates and the `Date` header of every answer tell the same time.
final class EmulatorClock: Sendable {
    private let offset = Atomic<Int64>(0)

    /// Seconds the clock runs ahead of the system clock.
    var offsetSeconds: Int64 { offset.load(ordering: .relaxed) }

    func advance(bySeconds seconds: Int64) {
        offset.add(seconds, ordering: .relaxed)
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
