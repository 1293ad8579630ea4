/// A syntax error in JSON text, with the 1-based line and column where it was found.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let column: Int
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A key that appears twice in one object. JSON allows it; the last value wins.
public struct JSONDuplicateKey: Sendable, Equatable {
    /// The JSON path of the repeated member, e.g. `syncs[1].target.parentUpdateFieldlist`.
    public let path: String
    public let line: Int
}

/// Parses JSON text (RFC 8259) into `JSONValue`, reporting errors with line and column.
///
/// The parser has no dependencies and bounds its nesting depth, so it is safe to fuzz and to feed
/// untrusted input.
public struct JSONParser {
    /// Objects and arrays nested deeper than this are rejected instead of exhausting the stack.
    public static let maximumDepth = 512

    /// Parses a complete document.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8)).value
    }

    /// Parses a complete document from UTF-8 bytes and also returns the duplicate keys it met.
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(JSONSyntaxError)
        -> (value: JSONValue, duplicates: [JSONDuplicateKey])
    {
        var parser = Parser(bytes: contiguous(bytes))
        return try parser.parseDocument()
    }

    /// The document's bytes as the parser holds them: an array as it is, a contiguous collection
    /// (`Data`, a buffer) copied in one go — a generic copy element by element, across the module
    /// boundary, cost more than parsing a small record.
    private static func contiguous<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        if let array = bytes as? [UInt8] { return array }
        return bytes.withContiguousStorageIfAvailable { Array($0) } ?? Array(bytes)
    }

    /// Parses a document that is one object, keeping only the members named in `keys`; the other
    /// members' values are stepped over without being built or checked, and once every name was
    /// found the rest is not read (reading a few fields of wide records a program wrote itself,
    /// each name once — use `parse(_:)` for text from outside).
    public static func parseObject(_ text: String, keeping keys: Set<String>) throws(JSONSyntaxError) -> JSONObject {
        try parseObject(Array(text.utf8), keeping: keys)
    }

    /// ``parseObject(_:keeping:)`` on UTF-8 bytes.
    public static func parseObject<Bytes: Collection<UInt8>>(_ bytes: Bytes, keeping keys: Set<String>) throws(JSONSyntaxError) -> JSONObject {
        try parseObject(bytes, keeping: MemberNames(keys))
    }

    /// Member names made ready once for ``parseObject(_:keeping:)-(_,MemberNames)`` over many documents.
    public struct MemberNames: Sendable {
        let utf8: [[UInt8]]
        /// The names as strings, the keys of the members kept (not decoded again for each document).
        let strings: [String]

        public init(_ names: some Sequence<String>) {
            strings = Array(names)
            utf8 = strings.map { Array($0.utf8) }
        }
    }

    /// ``parseObject(_:keeping:)`` on UTF-8 bytes, with the names made ready beforehand.
    public static func parseObject<Bytes: Collection<UInt8>>(_ bytes: Bytes, keeping names: MemberNames) throws(JSONSyntaxError) -> JSONObject {
        var parser = Parser(bytes: contiguous(bytes))
        parser.skipWhitespace()
        guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "{") else {
            throw parser.error("expected an object")
        }
        return try parser.parseObject(depth: 1, keeping: names)
    }

    /// The members of a document that is one object, each as the byte ranges of its name (between
    /// the quotes, escapes as written) and of its value, neither built nor checked beyond finding
    /// its end: for rewriting a few members of documents a program wrote itself, the others
    /// copied as they are.
    public static func members(of bytes: [UInt8]) throws(JSONSyntaxError) -> [(name: Range<Int>, value: Range<Int>)] {
        try members(of: bytes, elementsOf: nil).members
    }
}

struct Parser {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    var lineStart = 0
    /// Set when parsing began inside the document (``init(bytes:at:)``): `line` and `lineStart`
    /// then count from there, and an error counts them over the whole document instead.
    var startedInside = false
    var duplicates: [JSONDuplicateKey] = []
    /// Where the parser is, rendered only when a repeated key is reported.
    var path: [PathComponent] = []
    /// The member count of the last object with members ended at each of the first eight levels:
    /// the room taken for the next object at that level (the records of a page share their
    /// shape), so its members are not grown one reallocation after another.
    var objectSizes = SIMD8<Int>(repeating: 0)

    enum PathComponent {
        case key(String)
        case index(Int)

        var text: String {
            switch self {
            case .index(let index): return "[\(index)]"
            case .key(let key):
                return key.isEmpty || key.contains(where: { !$0.isLetter && !$0.isNumber && $0 != "_" }) ? "[\"\(key)\"]" : "." + key
            }
        }
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed and skipped.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> (value: JSONValue, duplicates: [JSONDuplicateKey]) {
        skipWhitespace()
        if index >= bytes.count { throw error("the document is empty") }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index < bytes.count { throw error("unexpected \(describe(bytes[index])) after the end of the document") }
        return (value, duplicates)
    }

    func error(_ message: String) -> JSONSyntaxError {
        var line = line, lineStart = lineStart
        if startedInside {
            let before = bytes[..<min(index, bytes.count)]
            line = 1 + before.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        var i = lineStart
        while i < min(index, bytes.count) {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral(Self.trueLiteral); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral(Self.falseLiteral); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral(Self.nullLiteral); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected \(describe(bytes[index])), expected a value")
        }
    }

    static let trueLiteral = Array("true".utf8)
    static let falseLiteral = Array("false".utf8)
    static let nullLiteral = Array("null".utf8)

    mutating func expectLiteral(_ expected: [UInt8]) throws(JSONSyntaxError) {
        let count = expected.count
        let ok = index + count <= bytes.count && bytes[index..<index + count].elementsEqual(expected)
        guard ok else { throw error("invalid literal, expected '\(String(decoding: expected, as: UTF8.self))'") }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        if depth > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth) levels") }
        index += 1
        var object = JSONObject()
        let level = depth <= objectSizes.scalarCount ? depth - 1 : nil
        if let level, objectSizes[level] > 0 { object.reserveCapacity(objectSizes[level]) }
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        // One bit per (UTF-8 length, last byte) signature of the names met: a name whose bit is clear
        // cannot repeat one, and is appended without comparing it with the others.
        var signatures: UInt64 = 0
        repeat {
            try expectMemberName()
            let keyLine = line
            let nameStart = index + 1
            let key = try parseString(memberName: true)
            // Written without escapes (the usual case), the name's last byte is the text's.
            let length = key.utf8.count
            let last = length == 0 ? 0 : length == index - 1 - nameStart ? bytes[index - 2] : key.utf8.last!
            let signature = UInt64(1) << ((UInt64(length) &* 7 &+ UInt64(last)) & 63)
            try expectColon()
            // The path is only kept through containers: a scalar holds no repeated key.
            let nested = opensContainer
            if nested { path.append(.key(key)) }
            let value = try parseValue(depth: depth)
            if signatures & signature == 0 {
                signatures |= signature
                object.appendAbsent(value, forKey: key)
            } else if object.updateValue(value, forKey: key) {
                if !nested { path.append(.key(key)) }
                duplicates.append(JSONDuplicateKey(path: renderPath(), line: keyLine))
                if !nested { path.removeLast() }
            }
            if nested { path.removeLast() }
        } while try objectContinues()
        if let level { objectSizes[level] = object.count }
        return .object(object)
    }

    /// At a member name's opening quote (after any whitespace), or an error.
    mutating func expectMemberName() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw error(index < bytes.count ? "expected a member name in double quotes" : "unexpected end of input inside an object")
        }
    }

    /// Past the `:` after a member name, at its value.
    mutating func expectColon() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after member name") }
        index += 1
        skipWhitespace()
    }

    /// Past the `,` (`true`: another member follows) or the `}` (`false`) after a member.
    mutating func objectContinues() throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input inside an object") }
        if bytes[index] == UInt8(ascii: ",") { index += 1; return true }
        if bytes[index] == UInt8(ascii: "}") { index += 1; return false }
        throw error("expected ',' or '}' after an object member")
    }

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

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        if depth > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth) levels") }
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            if opensContainer {
                path.append(.index(array.count))
                array.append(try parseValue(depth: depth))
                path.removeLast()
            } else {
                array.append(try parseValue(depth: depth))
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(array) }
            throw error("expected ',' or ']' after an array element")
        }
    }

    /// `true` at the opening bracket of an object or array.
    var opensContainer: Bool {
        index < bytes.count && (bytes[index] == UInt8(ascii: "{") || bytes[index] == UInt8(ascii: "["))
    }

    func renderPath() -> String {
        var text = path.map(\.text).joined()
        if text.hasPrefix(".") { text.removeFirst() }
        return text
    }

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

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("leading zeros are not allowed in numbers") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return .double(value)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
