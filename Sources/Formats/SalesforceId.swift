import JSON

/// Salesforce record ids: 15 case-sensitive characters (key prefix, pod, counter) plus a
/// 3-character checksum that makes the 18-character form case-insensitive.
public enum SalesforceId {
    /// The key two spellings of one id share: its case-sensitive first 15 characters (a
    /// 15-character id and its 18-character form are the same record); `""` for no id.
    public static func key(_ value: JSONValue?) -> String {
        String((value?.stringValue ?? "").prefix(15))
    }

    private static let checksumBytes = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345".utf8)
    private static let base62 = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// The 18-character id for a 15-character one (`fifteen` must have 15 characters).
    static func eighteen(_ fifteen: String) -> String {
        var bytes = Array(fifteen.utf8)
        appendChecksum(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the 3-character checksum of the 15 ASCII characters `bytes` holds: each of its
    /// 5-character chunks gives a letter whose bits say which of them are capitals.
    private static func appendChecksum(to bytes: inout [UInt8]) {
        for chunk in 0..<3 {
            var bits = 0
            for position in 0..<5 where isUpper(bytes[chunk * 5 + position]) {
                bits |= 1 << position
            }
            bytes.append(checksumBytes[bits])
        }
    }

    /// Makes the `counter`-th id of an object with key prefix `prefix` (3 characters).
    public static func make(prefix: String, counter: Int64) -> String {
        var bytes = Array(prefix.utf8)
        bytes.reserveCapacity(18)
        bytes.append(contentsOf: "0S".utf8)
        bytes.append(contentsOf: repeatElement(0, count: 10))
        var value = counter
        for position in (bytes.count - 10..<bytes.count).reversed() {
            bytes[position] = base62[Int(value % 62)]
            value /= 62
        }
        appendChecksum(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The canonical 18-character form of an id given as 15 or 18 characters, or `nil` when it is
    /// not a well-formed id (wrong length, characters, or checksum).
    public static func normalize(_ id: String) -> String? {
        let bytes = Array(id.utf8)
        guard bytes.allSatisfy({ isUpper($0) || isLower($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        switch bytes.count {
        case 15:
            var eighteen = bytes
            appendChecksum(to: &eighteen)
            return String(decoding: eighteen, as: UTF8.self)
        case 18:
            // The 18-character form is case-insensitive: its checksum says which letters of the
            // first 15 characters are upper case, so the original id can be restored.
            var restored = Array(bytes[0..<15])
            for chunk in 0..<3 {
                guard let bits = checksumBytes.firstIndex(of: upper(bytes[15 + chunk])) else { return nil }
                for position in 0..<5 {
                    let index = chunk * 5 + position
                    restored[index] = bits & (1 << position) != 0 ? upper(restored[index]) : lower(restored[index])
                }
            }
            appendChecksum(to: &restored)
            guard zip(restored, bytes).allSatisfy({ upper($0) == upper($1) }) else { return nil }
            return String(decoding: restored, as: UTF8.self)
        default:
            return nil
        }
    }

    private static func isUpper(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
    private static func isLower(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
    private static func upper(_ byte: UInt8) -> UInt8 { isLower(byte) ? byte - 32 : byte }
    private static func lower(_ byte: UInt8) -> UInt8 { isUpper(byte) ? byte + 32 : byte }

    /// The key prefix (first 3 characters).
    public static func prefix(of id: String) -> String { String(id.prefix(3)) }
}
