extension JSONParser {
    /// Copies the object at `range` of `bytes` into `output` in the compact form
    /// ``JSONValue/write(into:)`` gives the object once parsed — plain strings, integers and
    /// literals byte for byte, other values parsed and written — and appends to `members` the
    /// range in `output` of each top-level member's name (between its quotes) and value.
    ///
    /// - Returns: `false`, with `output` and `members` partly written, when some object in it has
    ///   a member name that is not plain ASCII or that repeats (parsing merges repeated names and
    ///   compares others as strings, so such an object must be parsed to be written the same), or
    ///   when it holds `-0.0`, which writing turns into `0.0`: the copy would not read back as the
    ///   value parsed.
    /// - Throws: ``JSONSyntaxError`` when the range does not hold one valid JSON object.
    public static func copyObject(in bytes: [UInt8], at range: Range<Int>, into output: inout [UInt8],
                                  members: inout [(name: Range<Int>, value: Range<Int>)]) throws(JSONSyntaxError) -> Bool {
        var parser = Parser(bytes: bytes, at: range.lowerBound)
        guard parser.opensObject else { throw parser.error("expected an object") }
        var names: [Range<Int>] = []
        names.reserveCapacity(32)
        guard try parser.copyObject(depth: 1, into: &output, names: &names, members: &members) else { return false }
        guard parser.index == range.upperBound else { throw parser.error("the object does not end where expected") }
        return true
    }

    /// The value at `range` of `bytes` (a member's value that ``copyObject(in:at:into:members:)`` wrote), built.
    public static func parseValue(in bytes: [UInt8], at range: Range<Int>) throws(JSONSyntaxError) -> JSONValue {
        var parser = Parser(bytes: bytes, at: range.lowerBound)
        let value = try parser.parseValue(depth: 0)
        guard parser.index == range.upperBound else { throw parser.error("the value does not end where expected") }
        return value
    }
}

extension Parser {
    /// The end (past the closing quote) of the string at `index` when it is plain — printable
    /// ASCII without escapes, which ``JSONValue/writeString(_:into:)`` writes back unchanged —
    /// else `nil`. Does not move.
    func plainStringEnd() -> Int? {
        var position = index + 1
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { return position + 1 }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        return nil
    }

    /// Copies the value at `index` into `output` as ``JSONValue/write(into:)`` writes what
    /// ``parseValue(depth:)`` builds of it (see ``JSONParser/copyObject(in:at:into:members:)``).
    /// `names` holds the member names of the objects being copied, for finding repeats; `members`
    /// takes the top-level object's members (depth 1).
    mutating func copyValue(depth: Int, into output: inout [UInt8], names: inout [Range<Int>],
                            members: inout [(name: Range<Int>, value: Range<Int>)]) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try copyObject(depth: depth + 1, into: &output, names: &names, members: &members)
        case UInt8(ascii: "["):
            return try copyArray(depth: depth + 1, into: &output, names: &names, members: &members)
        case UInt8(ascii: "\""):
            if let end = plainStringEnd() {
                output.append(contentsOf: bytes[index..<end])
                index = end
            } else {
                JSONValue.writeString(try parseString(), into: &output)
            }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = index
            let number = try parseNumber()
            // An integer is written as its digits, but `-0` as `0`.
            if case .integer(let value) = number, value != 0 || bytes[start] != UInt8(ascii: "-") {
                output.append(contentsOf: bytes[start..<index])
            } else if case .double(let value) = number, value == 0, value.sign == .minus {
                // Written `0.0`, it would read back as another value than the one parsed.
                return false
            } else {
                number.write(into: &output)
            }
        default:
            try parseValue(depth: depth).write(into: &output)
        }
        return true
    }

    /// ``copyValue(depth:into:names:members:)`` for the object at `index`; at depth 1, appends the
    /// ranges in `output` of its members' names and values to `members`.
    mutating func copyObject(depth: Int, into output: inout [UInt8], names: inout [Range<Int>],
                             members: inout [(name: Range<Int>, value: Range<Int>)]) throws(JSONSyntaxError) -> Bool {
        if try enterCopy(depth: depth, closedBy: UInt8(ascii: "}"), into: &output) { return true }
        let first = names.count
        defer { names.removeSubrange(first...) }
        // One bit per (length, last byte) of the names met, as the parser keeps: only a name whose
        // bit is set is compared with the others.
        var signatures: UInt64 = 0
        repeat {
            try expectMemberName()
            guard let end = plainStringEnd() else { return false }
            let name = index + 1..<end - 1
            let last = name.isEmpty ? 0 : bytes[name.upperBound - 1]
            let signature = UInt64(1) << ((UInt64(name.count) &* 7 &+ UInt64(last)) & 63)
            if signatures & signature != 0,
               names[first...].contains(where: { $0.count == name.count && bytes[$0].elementsEqual(bytes[name]) }) {
                return false
            }
            signatures |= signature
            names.append(name)
            let nameInOutput = output.count + 1..<output.count + 1 + name.count
            output.append(contentsOf: bytes[index..<end])
            index = end
            try expectColon()
            output.append(UInt8(ascii: ":"))
            let valueStart = output.count
            guard try copyValue(depth: depth, into: &output, names: &names, members: &members) else { return false }
            if depth == 1 { members.append((nameInOutput, valueStart..<output.count)) }
            let more = try objectContinues()
            output.append(UInt8(ascii: more ? "," : "}"))
            if !more { return true }
        } while true
    }

    /// Steps into the object or array at `index`, at `depth`, copying its opening bracket; `true`
    /// when it is empty, its closing bracket copied too.
    private mutating func enterCopy(depth: Int, closedBy close: UInt8, into output: inout [UInt8]) throws(JSONSyntaxError) -> Bool {
        if depth > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth) levels") }
        output.append(bytes[index])
        index += 1
        skipWhitespace()
        guard index < bytes.count && bytes[index] == close else { return false }
        index += 1
        output.append(close)
        return true
    }

    /// ``copyValue(depth:into:names:members:)`` for the array at `index`.
    mutating func copyArray(depth: Int, into output: inout [UInt8], names: inout [Range<Int>],
                            members: inout [(name: Range<Int>, value: Range<Int>)]) throws(JSONSyntaxError) -> Bool {
        if try enterCopy(depth: depth, closedBy: UInt8(ascii: "]"), into: &output) { return true }
        while true {
            guard try copyValue(depth: depth, into: &output, names: &names, members: &members) else { return false }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                output.append(UInt8(ascii: ","))
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                output.append(UInt8(ascii: "]"))
                return true
            }
            throw error("expected ',' or ']' after an array element")
        }
    }
}
