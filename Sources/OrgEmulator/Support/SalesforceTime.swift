import Foundation
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
