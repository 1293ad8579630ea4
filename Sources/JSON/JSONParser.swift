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
