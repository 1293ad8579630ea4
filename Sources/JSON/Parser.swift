/// The byte-level JSON reader behind ``JSONParser``: values, objects and arrays, numbers, lines and
/// columns for errors, and repeated keys reported by path.
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
