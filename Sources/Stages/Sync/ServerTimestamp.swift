import JSON
import SOQL

/// Org timestamps (`2026-11-22T06:15:00.000+0000`) as instants, so they are compared by time and
/// not as strings, and written back into SOQL in UTC.
public enum ServerTimestamp {
    /// Epoch milliseconds of a timestamp value, or `nil` when it is absent or not a date-time.
    public static func milliseconds(_ value: JSONValue?) -> Int64? {
        guard let text = value?.stringValue else { return nil }
        return SOQLDateTime(parsing: text, requiringOffset: false)?.epochMilliseconds
    }

    /// A SOQL date-time literal in UTC for epoch milliseconds, e.g. `2026-11-22T06:15:00.000Z`.
    public static func soqlLiteral(_ milliseconds: Int64) -> String {
        SOQLDateTime(epochMilliseconds: milliseconds)?.description ?? "1970-01-01T00:00:00Z"
    }
}
