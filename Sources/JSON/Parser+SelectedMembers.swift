/// Objects read for some members only: the others are skipped without being built.
extension Parser {
    /// An object's members named in `names` (each once); the others' values are skipped,
    /// and the object is left as soon as every name was found — or, `throughTheEnd`, read to its
    /// end, a repeated name keeping its last value. A member's name is compared as bytes, so a
    /// skipped one never becomes a `String`.
    mutating func parseObject(depth: Int, keeping names: JSONParser.MemberNames, throughTheEnd: Bool = false) throws(JSONSyntaxError) -> JSONObject {
        let keys = names.utf8
        index += 1
        var object = JSONObject()
        // Room for every member kept, taken once rather than grown member by member.
        object.reserveCapacity(keys.count)
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return object
        }
        // The names met so far (by position in `keys`, the first 64): a name met once is
        // appended without a lookup, under the string the caller gave.
        var met: UInt64 = 0
        repeat {
            try expectMemberName()
            let nameStart = index + 1
            try skipString()
            let name = bytes[nameStart..<index - 1]
            try expectColon()
            var position = keys.firstIndex { $0.count == name.count && $0.elementsEqual(name) }
            if position == nil, name.contains(UInt8(ascii: "\\")) {
                let unescaped = try Self.unescaped(name)
                position = keys.firstIndex { $0.elementsEqual(unescaped.utf8) }
            }
            guard let position else {
                try skipValue(depth: depth)
                continue
            }
            let value = try parseValue(depth: depth)
            let bit: UInt64 = position < 64 ? 1 << UInt64(position) : 0
            if bit != 0 && met & bit == 0 {
                met |= bit
                object.appendAbsent(value, forKey: names.strings[position])
            } else {
                object[names.strings[position]] = value
            }
            if object.count == keys.count && !throughTheEnd { return object }
        } while try objectContinues()
        return object
    }

    /// Steps over one value without building it (strings are scanned for their closing quote,
    /// objects and arrays by their brackets).
    mutating func skipValue(depth: Int) throws(JSONSyntaxError) {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var nesting = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    try skipString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    nesting += 1
                    if depth + nesting > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth) levels") }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    nesting -= 1
                    if nesting == 0 {
                        index += 1
                        return
                    }
                case 0x0A:
                    line += 1
                    lineStart = index + 1
                default:
                    break
                }
                index += 1
            }
            throw error("unexpected end of input inside a value")
        default:
            // A number or a literal: up to the next delimiter.
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: break
                default:
                    index += 1
                    continue
                }
                break
            }
            if index == start { throw error("unexpected \(describe(bytes[index])), expected a value") }
        }
    }

    /// A member name written with escapes, as text.
    static func unescaped(_ name: ArraySlice<UInt8>) throws(JSONSyntaxError) -> String {
        var parser = Parser(bytes: [UInt8(ascii: "\"")] + name + [UInt8(ascii: "\"")])
        return try parser.parseString()
    }

    /// Steps over a string, escapes included.
    mutating func skipString() throws(JSONSyntaxError) {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 2
            default:
                index += 1
            }
        }
        throw error("unterminated string")
    }
}
