/// JSON objects left as the bytes they came in: one buffer and each object's range in it. A page
/// of query results is read this way when its records are copied into soup entries as they are
/// (``JSONParser/copyObject(in:at:into:members:)``) rather than built into values and written again.
public struct RawJSONObjects: Sendable {
    /// The document the objects are in.
    public let bytes: [UInt8]
    /// Each object's range in `bytes`, from its `{` to its `}`.
    public let ranges: [Range<Int>]

    /// Objects at `ranges` of `bytes`; each range must hold one JSON object (checked when read).
    public init(bytes: [UInt8], ranges: [Range<Int>]) {
        self.bytes = bytes
        self.ranges = ranges
    }

    /// The number of objects.
    public var count: Int { ranges.count }

    /// The object at `position`, built.
    public func object(at position: Int) throws(JSONSyntaxError) -> JSONObject {
        guard case .object(let object) = try JSONParser.parseValue(in: bytes, at: ranges[position]) else {
            throw Parser(bytes: bytes, at: ranges[position].lowerBound).error("expected an object")
        }
        return object
    }

    /// Every object, built.
    public func objects() throws(JSONSyntaxError) -> [JSONObject] {
        var objects: [JSONObject] = []
        objects.reserveCapacity(count)
        for position in ranges.indices { objects.append(try object(at: position)) }
        return objects
    }

    /// The members of the object at `position` named in `names`, built (a repeated one's last
    /// value, as parsing the object gives); the others skipped.
    public func members(_ names: JSONParser.MemberNames, at position: Int) throws(JSONSyntaxError) -> JSONObject {
        var parser = Parser(bytes: bytes, at: ranges[position].lowerBound)
        guard parser.opensObject else { throw parser.error("expected an object") }
        return try parser.parseObject(depth: 1, keeping: names, throughTheEnd: true)
    }
}

extension JSONParser {
    /// The ranges of the top-level members of the object `bytes` holds, as ``members(of:)`` finds
    /// them, and — when the member `name` is an array — the range of each of its elements, found
    /// in the same pass: a query page's records without building them.
    public static func members(of bytes: [UInt8], elementsOf name: String) throws(JSONSyntaxError)
        -> (members: [(name: Range<Int>, value: Range<Int>)], elements: [Range<Int>]?)
    {
        try members(of: bytes, elementsOf: Array(name.utf8))
    }

    /// ``members(of:elementsOf:)`` with the name as bytes, or none (``members(of:)``).
    static func members(of bytes: [UInt8], elementsOf name: [UInt8]?) throws(JSONSyntaxError)
        -> (members: [(name: Range<Int>, value: Range<Int>)], elements: [Range<Int>]?)
    {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.opensObject else { throw parser.error("expected an object") }
        let result = try parser.members(depth: 1, elementsOf: name)
        parser.skipWhitespace()
        if parser.index < bytes.count { throw parser.error("unexpected \(parser.describe(parser.bytes[parser.index])) after the end of the document") }
        return result
    }
}

extension Parser {
    /// A parser positioned at `start` of `bytes` (a value inside a larger document).
    init(bytes: [UInt8], at start: Int) {
        self.init(bytes: bytes)
        index = start
        startedInside = true
    }

    /// `true` at an object's opening brace.
    var opensObject: Bool { index < bytes.count && bytes[index] == UInt8(ascii: "{") }

    /// The members of the object at `index`: the ranges of each one's name and value; and, when
    /// the member `name` is an array, the range of each of its elements.
    mutating func members(depth: Int, elementsOf name: [UInt8]?) throws(JSONSyntaxError)
        -> (members: [(name: Range<Int>, value: Range<Int>)], elements: [Range<Int>]?)
    {
        index += 1
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        members.reserveCapacity(8)
        var elements: [Range<Int>]?
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return (members, nil)
        }
        repeat {
            try expectMemberName()
            let nameStart = index + 1
            try skipString()
            let memberName = nameStart..<index - 1
            try expectColon()
            let valueStart = index
            if let name, elements == nil, index < bytes.count, bytes[index] == UInt8(ascii: "["), bytes[memberName].elementsEqual(name) {
                elements = try elementRanges(depth: depth + 1)
            } else {
                try skipValue(depth: depth)
            }
            members.append((memberName, valueStart..<index))
        } while try objectContinues()
        return (members, elements)
    }

    /// The range of each element of the array at `index`, stepped over as ``skipValue(depth:)`` does.
    mutating func elementRanges(depth: Int) throws(JSONSyntaxError) -> [Range<Int>] {
        if depth > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth) levels") }
        index += 1
        var elements: [Range<Int>] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            let start = index
            try skipValue(depth: depth)
            elements.append(start..<index)
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return elements }
            throw error("expected ',' or ']' after an array element")
        }
    }
}
