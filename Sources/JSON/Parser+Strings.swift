/// Strings: escapes, `\u` sequences and surrogate pairs, and member names shared among the
/// records of a page.
extension Parser {
    /// - Parameter memberName: the string is a member name: the long names every soup entry
    ///   carries come back as shared literals, not as new allocations.
    mutating func parseString(memberName: Bool = false) throws(JSONSyntaxError) -> String {
        index += 1
        let start = index
        var high: UInt8 = 0
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                if memberName, index - start > 15, let name = Self.sharedName(bytes[start..<index]) {
                    index += 1
                    return name
                }
                // ASCII needs no check; anything else is validated as it is decoded.
                let text = bytes[start..<index]
                guard let string = high < 0x80 ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self) else {
                    throw error("invalid UTF-8 in a string")
                }
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string; escape it") }
            high |= byte
            index += 1
        }
        var buffer = Array(bytes[start..<min(index, bytes.count)])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid UTF-16 surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("unpaired UTF-16 surrogate in \\u escape")
                    }
                    buffer.append(contentsOf: Array(String(Character(UnicodeScalar(scalar)!)).utf8))
                default:
                    index -= 1
                    throw error("invalid escape '\\\(Character(UnicodeScalar(escape)))'")
                }
            default:
                if byte < 0x20 { throw error("control character in a string; escape it") }
                buffer.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    /// Member names longer than a small string (15 bytes) that soup entries and Salesforce
    /// records carry by the million.
    static let sharedNames: [(bytes: [UInt8], name: String)] = [
        "_soupLastModifiedDate", "_soupCreatedDate", "__locally_created__", "__locally_updated__", "__locally_deleted__",
        "LastModifiedDate", "LastModifiedById",
    ].map { (Array($0.utf8), $0) }

    /// The shared literal spelled by `name`, if any.
    static func sharedName(_ name: ArraySlice<UInt8>) -> String? {
        sharedNames.first { $0.bytes.count == name.count && $0.bytes.elementsEqual(name) }?.name
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }
}
