import Foundation

/// Timestamps the way an org writes them: UTC, whole seconds, `2024-01-31T12:00:00.000+0000`.
public enum SalesforceTime {
    /// `2024-01-31T12:00:00.000+0000` for epoch milliseconds.
    public static func format(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
    }

    /// `2024-01-31` for epoch milliseconds.
    public static func formatDate(_ milliseconds: Int64) -> String {
        String(format(milliseconds).prefix(10))
    }

    /// Parses `2024-01-31T12:00:00Z`, `…T12:00:00.000+0000`, `…+00:00` or a date `2024-01-31`
    /// (midnight UTC) into epoch milliseconds.
    public static func parse(_ text: String) -> Int64? {
        let characters = Array(text.trimmingCharacters(in: .whitespaces))
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= characters.count, characters[range].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(String(characters[range]))
        }
        guard let year = number(0..<4), characters.count >= 10, characters[4] == "-", characters[7] == "-",
              let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0, millis = 0, offsetMinutes = 0
        if characters.count > 10 {
            guard characters[10] == "T" || characters[10] == " ", let h = number(11..<13), characters.count >= 19,
                  characters[13] == ":", let m = number(14..<16), characters[16] == ":", let s = number(17..<19) else { return nil }
            hour = h; minute = m; second = s
            var index = 19
            if index < characters.count, characters[index] == "." {
                index += 1
                var digits = ""
                while index < characters.count, characters[index].isASCII, characters[index].isNumber { digits.append(characters[index]); index += 1 }
                guard !digits.isEmpty, let fraction = Int((digits + "00").prefix(3)) else { return nil }
                millis = fraction
            }
            if index < characters.count {
                let sign = characters[index]
                if sign == "Z" || sign == "z" {
                    index += 1
                } else if sign == "+" || sign == "-" {
                    let rest = String(characters[(index + 1)...]).replacingOccurrences(of: ":", with: "")
                    guard rest.count == 4, let hours = Int(rest.prefix(2)), let minutes = Int(rest.suffix(2)) else { return nil }
                    offsetMinutes = (hours * 60 + minutes) * (sign == "-" ? -1 : 1)
                    index = characters.count
                } else {
                    return nil
                }
            }
            guard index == characters.count else { return nil }
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = Int64(timegm(&parts)) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }
}

/// The emulator's clock: the system clock plus an offset tests move with `POST /emulator/clock`,
/// truncated to whole seconds like an org's timestamps.
struct EmulatorClock: Sendable {
    var offsetSeconds: Int64 = 0

    /// Now, in epoch milliseconds, whole seconds.
    func now() -> Int64 {
        (Int64(Date().timeIntervalSince1970) + offsetSeconds) * 1000
    }
}
