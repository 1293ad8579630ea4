import Foundation
import JSON

/// Whether a value the org holds is the value a write sent, across the spellings the org may
/// give it back in: numbers sent as text (`"5"` and `5.0`), booleans as text, date-times with
/// another precision or offset (`…T10:00:00Z` and `…T10:00:00.000+0000`), an empty string and null.
enum SyncUpValueMatch {
    static func same(sent: JSONValue, stored: JSONValue?) -> Bool {
        let stored = stored ?? .null
        if sent == stored { return true }
        switch (sent, stored) {
        case (.null, .string(let text)), (.string(let text), .null):
            return text.isEmpty
        case (.bool(let flag), .string(let text)), (.string(let text), .bool(let flag)):
            return text.lowercased() == (flag ? "true" : "false")
        default:
            break
        }
        if let left = number(sent), let right = number(stored) { return left == right }
        if let left = ServerTimestamp.milliseconds(sent), let right = ServerTimestamp.milliseconds(stored),
           sent.stringValue?.contains("T") == true {
            return left == right
        }
        return false
    }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let number): return Double(number)
        case .double(let number): return number
        case .string(let text): return Double(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }
}
