import Testing

@testable import JSON

/// ``JSONParser/copyObject(in:at:into:members:)`` writes what parsing and writing would, byte
/// for byte, or declines; ``JSONParser/members(of:elementsOf:)`` finds a page's records.
@Suite struct RawJSONObjectsTests {
    /// What parsing `text` and writing it compactly gives.
    private func written(_ text: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try JSONParser.parse(text).write(into: &bytes)
        return bytes
    }

    /// `text` copied as one object: the output, or `nil` when the copy declines.
    private func copied(_ text: String) throws -> (output: [UInt8], members: [(name: String, value: String)])? {
        let bytes = Array(text.utf8)
        let start = bytes.firstIndex(of: UInt8(ascii: "{"))!
        let end = bytes.lastIndex(of: UInt8(ascii: "}"))! + 1
        var output: [UInt8] = []
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        guard try JSONParser.copyObject(in: bytes, at: start..<end, into: &output, members: &members) else { return nil }
        return (output, members.map { (String(decoding: output[$0.name], as: UTF8.self), String(decoding: output[$0.value], as: UTF8.self)) })
    }

    static let documents: [String] = [
        #"{}"#,
        #"{"a":1}"#,
        " {\n  \"a\" : 1 ,\t\"b\" : [ 1 , 2 , { } , [ ] ] \r\n} ",
        #"{"n":-0,"z":0,"i":-12,"big":9223372036854775807,"bigger":9223372036854775808,"neg":-9223372036854775808}"#,
        #"{"d":1.0,"e":1e2,"f":1.50,"g":-0.5,"h":1E-7,"k":0.1,"l":12345678901234567890.5,"m":2.5e+3}"#,
        #"{"s":"plain","t":"with \"quotes\" and \\ and \/ slash","u":"\u00e9\u0001\n\t\r\b\f","v":"é — 日本","w":"\ud83d\ude00"}"#,
        #"{"attributes":{"type":"Account","url":"/services/data/v62.0/sobjects/Account/001"},"Id":"001","Owner":{"Name":"Ann","Nested":{"x":[true,false,null]}}}"#,
        #"{"a":[[[[]]]],"b":[{"c":{"d":{}}}],"e":null,"f":true,"g":false}"#,
        #"{"long":"\#(String(repeating: "x", count: 300))"}"#,
        // The same name in different objects is no repeat.
        #"{"a":{"x":1},"b":{"x":2},"x":3}"#,
    ]

    @Test(arguments: documents) func aCopyIsWhatParsingAndWritingGive(_ text: String) throws {
        let copy = try #require(try copied(text))
        #expect(copy.output == (try written(text)), "\(String(decoding: copy.output, as: UTF8.self))")
        // The members found are the top-level ones, each as written in the copy.
        let object = try #require(try JSONParser.parse(text).objectValue)
        #expect(copy.members.map(\.name) == object.keys)
        for (name, value) in copy.members {
            var bytes: [UInt8] = []
            object[name]!.write(into: &bytes)
            #expect(value == String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Names the parser merges or compares as strings: parsed instead.
    @Test(arguments: [
        #"{"a":1,"a":2}"#, #"{"o":{"b":1,"c":2,"b":3}}"#, #"{"\u0061":1}"#, #"{"é":1}"#, #"{"l":[{"k":1,"k":1}]}"#,
    ]) func repeatedOrUnplainNamesAreLeftToTheParser(_ text: String) throws {
        #expect(try copied(text) == nil)
    }

    /// A repeat is told from a name of the same length and last byte (the parser's quick check).
    @Test func namesAlikeButDifferentAreNoRepeat() throws {
        let text = #"{"ab":1,"cb":2,"xb":3,"ab2":4,"\#((0..<40).map { "f\($0)b" }.joined(separator: "\":0,\""))":0}"#
        let copy = try #require(try copied(text))
        #expect(copy.output == (try written(text)))
    }

    /// `-0.0` is written `0.0`: a copy would read back as another value than the one parsed.
    @Test func negativeZeroIsLeftToTheParser() throws {
        #expect(try copied(#"{"a":-0.0}"#) == nil)
        #expect(try copied(#"{"a":[{"b":-0e5}]}"#) == nil)
        #expect(try copied(#"{"a":-0}"#)?.output == Array(#"{"a":0}"#.utf8))
    }

    /// An error in a record of a page names the line and column in the page.
    @Test func anErrorInARecordNamesItsPlaceInThePage() throws {
        let page = Array("{\"records\": [\n  {\"a\": 1},\n  {\"b\": tru}\n]}".utf8)
        let elements = try #require(try JSONParser.members(of: page, elementsOf: "records").elements)
        let raw = RawJSONObjects(bytes: page, ranges: elements)
        #expect(throws: JSONSyntaxError(line: 3, column: 9, message: "invalid literal, expected 'true'")) { try raw.object(at: 1) }
        var output: [UInt8] = []
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        #expect(throws: JSONSyntaxError(line: 3, column: 9, message: "invalid literal, expected 'true'")) {
            _ = try JSONParser.copyObject(in: page, at: elements[1], into: &output, members: &members)
        }
    }

    @Test(arguments: [#"{"a":tru}"#, #"{"a":1,}"#, #"{"a":01}"#, #"{"a":"x\qy"}"#, #"{"a":[1,]}"#, "{\"a\":\"\u{01}\"}", #"{"a":-}"#])
    func malformedObjectsThrowAsTheParserDoes(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text) }
        #expect(throws: JSONSyntaxError.self) { _ = try copied(text) }
    }

    @Test func invalidUTF8InAStringThrows() {
        let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        var output: [UInt8] = []
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(bytes) }
        #expect(throws: JSONSyntaxError.self) { _ = try JSONParser.copyObject(in: bytes, at: 0..<bytes.count, into: &output, members: &members) }
    }

    @Test func aRangeThatEndsElsewhereThrows() {
        let bytes = Array(#"{"a":1} "#.utf8)
        var output: [UInt8] = []
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        #expect(throws: JSONSyntaxError.self) { _ = try JSONParser.copyObject(in: bytes, at: 0..<8, into: &output, members: &members) }
    }

    @Test func aPagesRecordsAreFoundWithoutBuildingThem() throws {
        let page = Array(#" {"totalSize": 3, "done": false, "records": [ {"Id":"1"} , null, {"Id":"2","x":{"y":[1]}} ], "nextRecordsUrl": "/q/2"}"#.utf8)
        let (members, elements) = try JSONParser.members(of: page, elementsOf: "records")
        #expect(members.map { String(decoding: page[$0.name], as: UTF8.self) } == ["totalSize", "done", "records", "nextRecordsUrl"])
        let found = try #require(elements).map { String(decoding: page[$0], as: UTF8.self) }
        #expect(found == [#"{"Id":"1"}"#, "null", #"{"Id":"2","x":{"y":[1]}}"#])
        let raw = RawJSONObjects(bytes: page, ranges: [try #require(elements)[0], try #require(elements)[2]])
        #expect(try raw.objects() == [["Id": "1"], ["Id": "2", "x": ["y": [1]]]])
        #expect(try raw.members(JSONParser.MemberNames(["x"]), at: 1) == ["x": ["y": [1]]])
        // Not an array, or absent: no elements.
        #expect(try JSONParser.members(of: Array(#"{"records":{}}"#.utf8), elementsOf: "records").elements == nil)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.members(of: Array(#"{"records":[1,}"#.utf8), elementsOf: "records") }
    }
}
