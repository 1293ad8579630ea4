import Foundation
import Testing

@testable import JSON

/// Parses `text` and returns the syntax error it raises, or `nil` when it parses.
private func syntaxError(_ text: String) -> JSONSyntaxError? {
    do {
        _ = try JSONParser.parse(text)
        return nil
    } catch {
        return error
    }
}

private func syntaxError(bytes: [UInt8]) -> JSONSyntaxError? {
    do {
        _ = try JSONParser.parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// A malformed document and where its error must be reported.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    let text: String
    let line: Int
    let column: Int
    let message: String
    var testDescription: String { text.debugDescription }
}

@Suite struct JSONParseErrorTests {
    static let cases: [ErrorCase] = [
        ErrorCase(text: #"{"a": tru}"#, line: 1, column: 7, message: "invalid literal, expected 'true'"),
        ErrorCase(text: #"{"a" 1}"#, line: 1, column: 6, message: "expected ':' after member name"),
        ErrorCase(text: "[1, 2,]", line: 1, column: 7, message: "unexpected ']', expected a value"),
        ErrorCase(text: "{\n  \"a\": 1,\n  \"b\": }", line: 3, column: 8, message: "unexpected '}', expected a value"),
        ErrorCase(text: #"{"a":1} x"#, line: 1, column: 9, message: "unexpected 'x' after the end of the document"),
        ErrorCase(text: "", line: 1, column: 1, message: "the document is empty"),
        ErrorCase(text: "  \n   ", line: 2, column: 4, message: "the document is empty"),
        ErrorCase(text: #""abc"#, line: 1, column: 5, message: "unterminated string"),
        ErrorCase(text: "[01]", line: 1, column: 3, message: "leading zeros are not allowed in numbers"),
        ErrorCase(text: "[1.]", line: 1, column: 4, message: "expected a digit after '.'"),
        ErrorCase(text: "[1e]", line: 1, column: 4, message: "expected a digit in the exponent"),
        ErrorCase(text: "[-]", line: 1, column: 3, message: "invalid number"),
        ErrorCase(text: "[1e400]", line: 1, column: 7, message: "number out of range"),
        // Columns count characters, not UTF-8 bytes.
        ErrorCase(text: #"{"é": x}"#, line: 1, column: 7, message: "unexpected 'x', expected a value"),
        ErrorCase(text: #"["😀😀", x]"#, line: 1, column: 8, message: "unexpected 'x', expected a value"),
        ErrorCase(text: #"["\q"]"#, line: 1, column: 4, message: "invalid escape '\\q'"),
        ErrorCase(text: "[1,\n2,\n@]", line: 3, column: 1, message: "unexpected '@', expected a value"),
        ErrorCase(text: "{1: 2}", line: 1, column: 2, message: "expected a member name in double quotes"),
        ErrorCase(text: "[\"a\tb\"]", line: 1, column: 4, message: "control character in a string; escape it"),
        ErrorCase(text: "[\"a\nb\"]", line: 1, column: 4, message: "control character in a string; escape it"),
        ErrorCase(text: #"{"a": 1"#, line: 1, column: 8, message: "unexpected end of input inside an object"),
        ErrorCase(text: "[1 2]", line: 1, column: 4, message: "expected ',' or ']' after an array element"),
        ErrorCase(text: #"{"a": 1 "b": 2}"#, line: 1, column: 9, message: "expected ',' or '}' after an object member"),
        ErrorCase(text: "[nul]", line: 1, column: 2, message: "invalid literal, expected 'null'"),
        ErrorCase(text: "\r\n\r\n  [\r\n    fals ]", line: 4, column: 5, message: "invalid literal, expected 'false'"),
        ErrorCase(text: #""\u12"#, line: 1, column: 4, message: "incomplete \\u escape"),
        ErrorCase(text: #"["\u12"]"#, line: 1, column: 7, message: "invalid hex digit in \\u escape"),
        ErrorCase(text: #"["\u12G4"]"#, line: 1, column: 7, message: "invalid hex digit in \\u escape"),
    ]

    @Test(arguments: cases)
    func reportsLineAndColumn(_ testCase: ErrorCase) throws {
        let error = try #require(syntaxError(testCase.text))
        #expect(error.line == testCase.line)
        #expect(error.column == testCase.column)
        #expect(error.message == testCase.message)
        #expect(error.description == "line \(testCase.line), column \(testCase.column): \(testCase.message)")
    }

    @Test func invalidUTF8InAStringIsRejected() throws {
        let error = try #require(syntaxError(bytes: [0x5B, 0x22, 0x61, 0xFF, 0x22, 0x5D]))
        #expect(error.message == "invalid UTF-8 in a string")
        #expect(error.line == 1)
        // Same on the slow path (a string that also has an escape).
        let slow = try #require(syntaxError(bytes: Array(#"["\n"#.utf8) + [0xC3] + Array(#""]"#.utf8)))
        #expect(slow.message == "invalid UTF-8 in a string")
    }
}

@Suite struct JSONByteOrderMarkTests {
    @Test func bomIsSkipped() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"a": [1, "x"]}"#.utf8)
        let (value, duplicates) = try JSONParser.parse(bytes)
        #expect(value == ["a": [1, "x"]])
        #expect(duplicates.isEmpty)
        // The same through the String entry point.
        #expect(try JSONParser.parse("\u{FEFF}[true]") == [true])
    }

    @Test func columnsAfterABOMDoNotCountIt() throws {
        let error = try #require(syntaxError(bytes: [0xEF, 0xBB, 0xBF] + Array("{]".utf8)))
        #expect(error.line == 1)
        #expect(error.column == 2)
    }

    @Test func aBOMAloneIsAnEmptyDocument() throws {
        let error = try #require(syntaxError(bytes: [0xEF, 0xBB, 0xBF]))
        #expect(error.message == "the document is empty")
        #expect(error.column == 1)
    }

    @Test func aBOMInTheMiddleIsNotWhitespace() throws {
        let error = try #require(syntaxError("[1,\u{FEFF}2]"))
        #expect(error.line == 1)
        #expect(error.column == 4)
    }
}

@Suite struct JSONStringEscapeTests {
    @Test func simpleEscapes() throws {
        let value = try JSONParser.parse(#""\"\\\/\b\f\n\r\t""#)
        #expect(value == .string("\"\\/\u{08}\u{0C}\n\r\t"))
    }

    @Test func unicodeEscapes() throws {
        #expect(try JSONParser.parse(#""\u0041\u00e9\u00E9\u20AC\u0000""#) == .string("Aéé€\u{0000}"))
    }

    @Test func surrogatePairs() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSONParser.parse(#""x\uD834\uDD1Ey""#) == .string("x𝄞y"))
    }

    @Test func loneHighSurrogateIsAnError() throws {
        let error = try #require(syntaxError(#""\ud83d""#))
        #expect(error.message == "unpaired UTF-16 surrogate in \\u escape")
        let followedByText = try #require(syntaxError(#""\ud83dabc""#))
        #expect(followedByText.message == "unpaired UTF-16 surrogate in \\u escape")
    }

    @Test func highSurrogateFollowedByANonLowEscapeIsAnError() throws {
        let error = try #require(syntaxError(#""\ud83d\u0041""#))
        #expect(error.message == "invalid UTF-16 surrogate pair")
    }

    @Test func loneLowSurrogateIsAnError() throws {
        let error = try #require(syntaxError(#""\ude00""#))
        #expect(error.message == "unpaired UTF-16 surrogate in \\u escape")
    }

    @Test func rawUnicodeIsKept() throws {
        #expect(try JSONParser.parse(#"["héllo 😀 日本"]"#) == ["héllo 😀 日本"])
    }

    @Test func escapedAndRawMixed() throws {
        #expect(try JSONParser.parse(#""é\n😀\u00e9""#) == .string("é\n😀é"))
    }

    @Test func keysAreUnescapedToo() throws {
        let value = try JSONParser.parse(#"{"a\u0062\n": 1}"#)
        #expect(value.objectValue?.keys == ["ab\n"])
    }
}

@Suite struct JSONDepthTests {
    @Test func nestingUpToTheLimitParses() throws {
        let depth = JSONParser.maximumDepth
        #expect(depth == 512)
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONParser.parse(text)
        var levels = 0
        while let array = value.arrayValue {
            levels += 1
            guard let first = array.first else { break }
            value = first
        }
        #expect(levels == depth)
    }

    @Test func nestingBeyondTheLimitIsAnError() throws {
        let depth = JSONParser.maximumDepth + 1
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let error = try #require(syntaxError(text))
        #expect(error.message == "nesting deeper than 512 levels")
        #expect(error.line == 1)
        #expect(error.column == 513)
    }

    @Test func objectsCountTowardsTheLimit() throws {
        let ok = String(repeating: #"{"a":"#, count: 511) + "[]" + String(repeating: "}", count: 511)
        #expect(throws: Never.self) { try JSONParser.parse(ok) }
        let deep = String(repeating: #"{"a":"#, count: 512) + "[]" + String(repeating: "}", count: 512)
        let error = try #require(syntaxError(deep))
        #expect(error.message == "nesting deeper than 512 levels")
        #expect(error.column == 512 * 5 + 1)
    }

    @Test func veryDeepInputFailsWithoutCrashing() throws {
        let text = String(repeating: "[", count: 200_000)
        let error = try #require(syntaxError(text))
        #expect(error.message == "nesting deeper than 512 levels")
    }
}

@Suite struct JSONNumberTests {
    @Test(arguments: [
        ("0", JSONValue.integer(0)),
        ("-12", .integer(-12)),
        ("42", .integer(42)),
        ("9223372036854775807", .integer(Int64.max)),
        ("-9223372036854775808", .integer(Int64.min)),
        ("1.0", .double(1.0)),
        ("1e2", .double(100)),
        ("1E+2", .double(100)),
        ("-1.5e-3", .double(-0.0015)),
        ("0.1", .double(0.1)),
        ("9223372036854775808", .double(9223372036854775808.0)),
    ])
    func integersStayIntegers(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONParser.parse(text) == expected)
    }

    /// Integers are written digit by digit: the same text `String(_:)` gives, at both ends of the range.
    @Test(arguments: [0, 7, -1, 10, -10, 99, 100, 1_234_567_890_123, Int64.max, Int64.min, Int64.min + 1])
    func integersAreWrittenAsTheirDecimalText(_ value: Int64) {
        #expect(JSONValue.integer(value).jsonString == String(value))
        var bytes = Array("[".utf8)
        JSONValue.writeInteger(value, into: &bytes)
        #expect(bytes == Array("[\(value)".utf8))
    }

    @Test func integerAndDoubleAreDistinct() throws {
        #expect(try JSONParser.parse("1") != JSONParser.parse("1.0"))
        #expect(JSONValue.double(3.0).integerValue == 3)
        #expect(JSONValue.double(3.5).integerValue == nil)
        #expect(JSONValue.integer(7).doubleValue == 7.0)
        #expect(JSONValue.string("7").integerValue == nil)
    }

    @Test func integersBeyondDoublePrecisionAreExact() throws {
        let value = try JSONParser.parse("[9007199254740993]")
        #expect(value == [.integer(9_007_199_254_740_993)])
        #expect(value.jsonString == "[9007199254740993]")
    }
}

@Suite struct JSONSerializationTests {
    @Test func compactOutputKeepsKeyOrder() throws {
        let text = #"{"z":1,"a":[true,false,null],"m":{"y":"s","b":2.5},"e":{},"f":[]}"#
        let value = try JSONParser.parse(text)
        #expect(value.jsonString == text)
        #expect(value.objectValue?.keys == ["z", "a", "m", "e", "f"])
    }

    @Test func whitespaceIsDropped() throws {
        let value = try JSONParser.parse("{ \"a\" :\n [ 1 , 2 ] ,\t\"b\" : \"x\" }")
        #expect(value.jsonString == #"{"a":[1,2],"b":"x"}"#)
    }

    @Test func doublesPrintAsDoubles() {
        #expect(JSONValue.double(1.0).jsonString == "1.0")
        #expect(JSONValue.double(-2.0).jsonString == "-2.0")
        #expect(JSONValue.double(0.1).jsonString == "0.1")
        #expect(JSONValue.double(2.5).jsonString == "2.5")
        #expect(JSONValue.integer(1).jsonString == "1")
        #expect(JSONValue.double(.infinity).jsonString == "null")
        #expect(JSONValue.double(.nan).jsonString == "null")
    }

    @Test(arguments: [1.0, 0.1, -2.5, 1e20, 1e-7, 123456.789, 1e15, 3.0e300, -0.000123])
    func doublesRoundTrip(_ number: Double) throws {
        let text = JSONValue.double(number).jsonString
        #expect(try JSONParser.parse(text) == .double(number), "\(text)")
    }

    @Test func stringsAreEscaped() throws {
        let original = "quote \" backslash \\ newline \n return \r tab \t bell \u{07} nul \u{00} unit \u{1F} slash / é 😀"
        let text = JSONValue.string(original).jsonString
        #expect(text == #""quote \" backslash \\ newline \n return \r tab \t bell \u0007 nul \u0000 unit \u001f slash / é 😀""#)
        #expect(try JSONParser.parse(text) == .string(original))
    }

    @Test func complexValueRoundTrips() throws {
        let value: JSONValue = [
            "Id": "001xx000003DGb2AAG",
            "attributes": ["type": "Account", "url": "/services/data/v62.0/sobjects/Account/001"],
            "Count": 12,
            "Amount": 1234.5,
            "Flags": [true, false, nil, 0, -1, 1.0],
            "Nested": ["deep": ["deeper": ["text": "line1\nline2 \"q\" é"]]],
            "Empty": [:],
            "EmptyArray": [],
        ]
        let compact = value.jsonString
        #expect(try JSONParser.parse(compact) == value)
        #expect(try JSONParser.parse(value.prettyJSONString) == value)
        #expect(try JSONParser.parse(compact).jsonString == compact)
        var bytes: [UInt8] = []
        value.write(into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == compact)
    }

    @Test func prettyPrinting() throws {
        let value = try JSONParser.parse(#"{"a":[1,2],"b":{},"c":{"d":null},"e":[]}"#)
        #expect(value.prettyJSONString == """
            {
              "a": [
                1,
                2
              ],
              "b": {},
              "c": {
                "d": null
              },
              "e": []
            }
            """)
    }
}

@Suite struct JSONDuplicateKeyTests {
    @Test func nestedDuplicateReportsItsPath() throws {
        let (value, duplicates) = try JSONParser.parse(Array(#"{"a": {"b": 1, "b": 2}}"#.utf8))
        #expect(duplicates == [JSONDuplicateKey(path: "a.b", line: 1)])
        #expect(value.value(atPath: "a.b") == 2)
    }

    @Test func duplicateInsideAnArrayElement() throws {
        let text = """
            {
              "syncs": [
                {},
                {"target": {"x": 1,
                  "x": 2}}
              ]
            }
            """
        let (value, duplicates) = try JSONParser.parse(Array(text.utf8))
        #expect(duplicates == [JSONDuplicateKey(path: "syncs[1].target.x", line: 5)])
        #expect(value["syncs"]?.arrayValue?[1].value(atPath: "target.x") == 2)
    }

    /// A name written with escapes repeats the same name written without, either way round,
    /// and names of equal length and last byte are told apart.
    @Test func escapedAndLookalikeNamesAreComparedAsText() throws {
        let (_, escapedSecond) = try JSONParser.parse(Array(#"{"ab": 1, "a\u0062": 2, "__locally_created__": 3, "__locally_created_\u005f": 4}"#.utf8))
        #expect(escapedSecond.map(\.path) == ["ab", "__locally_created__"])
        let (_, escapedFirst) = try JSONParser.parse(Array(#"{"a\u0062": 1, "ab": 2, "\u00e9": 3, "é": 4}"#.utf8))
        #expect(escapedFirst.map(\.path) == ["ab", "é"])
        let names = (0..<200).map { "k\($0 % 10)\($0 / 10)x" }
        let text = "{" + (names + names.prefix(3)).enumerated().map { #""\#($1)": \#($0)"# }.joined(separator: ",") + "}"
        let (value, lookalikes) = try JSONParser.parse(Array(text.utf8))
        #expect(lookalikes.map(\.path) == Array(names.prefix(3)))
        #expect(value.objectValue?.count == 200 && value["k00x"] == 200)
    }

    @Test func topLevelDuplicateKeepsFirstPositionLastValue() throws {
        let (value, duplicates) = try JSONParser.parse(Array(#"{"a":1,"b":2,"a":3}"#.utf8))
        #expect(duplicates.map(\.path) == ["a"])
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == 3)
        #expect(value.jsonString == #"{"a":3,"b":2}"#)
    }

    @Test func oddKeysAreBracketed() throws {
        let (_, duplicates) = try JSONParser.parse(Array(#"{"x": {"a-b": 1, "a-b": 2}, "": 0, "": 1, "a b": [{"k": 1, "k": 2}]}"#.utf8))
        #expect(duplicates.map(\.path) == [#"x["a-b"]"#, #"[""]"#, #"["a b"][0].k"#])
    }

    @Test func repeatedThreeTimesIsReportedTwice() throws {
        let (value, duplicates) = try JSONParser.parse(Array("{\"k\": 1,\n\"k\": 2,\n\"k\": 3}".utf8))
        #expect(duplicates == [JSONDuplicateKey(path: "k", line: 2), JSONDuplicateKey(path: "k", line: 3)])
        #expect(value["k"] == 3)
    }

    @Test func noDuplicatesInDistinctObjects() throws {
        let (_, duplicates) = try JSONParser.parse(Array(#"[{"a":1},{"a":2},{"b":{"a":3}}]"#.utf8))
        #expect(duplicates.isEmpty)
    }
}

/// The parser takes room for an object from the last one ended at its level (the records of a
/// page share a shape): objects that grow, shrink, nest and repeat names across a level still
/// parse to what they hold, in order.
@Suite struct JSONObjectSizeHintTests {
    @Test func objectsOfOneLevelOfEverySize() throws {
        let records: [JSONValue] = (0..<40).map { index in
            let size = [3, 0, 1, 12, 2, 30, 5][index % 7]
            var record = JSONObject()
            record["attributes"] = .object(JSONObject(uniqueKeysWithValues: (0..<(index % 3)).map { ("a\($0)", .integer(Int64($0))) }))
            for field in 0..<size { record["f\(field)"] = field % 2 == 0 ? .string("v\(index)-\(field)") : .integer(Int64(field)) }
            return .object(record)
        }
        let page: JSONValue = ["totalSize": 40, "records": .array(records)]
        let (value, duplicates) = try JSONParser.parse(Array(page.jsonString.utf8))
        #expect(duplicates.isEmpty)
        #expect(value == page)
        #expect(value["records"]?.arrayValue?.map { $0.objectValue?.keys ?? [] } == records.map { $0.objectValue?.keys ?? [] })
    }

    /// Deeper than the levels that keep a size, and a repeated name after a hinted start.
    @Test func deepObjectsAndRepeatedNames() throws {
        let deep = String(repeating: #"{"k": 1, "n": "#, count: 12) + "{}" + String(repeating: "}", count: 12)
        #expect(try JSONParser.parse(deep).value(atPath: "n.n.n.n.n.n.n.n.n.n.k") == 1)
        let (value, duplicates) = try JSONParser.parse(Array(#"[{"a":1,"b":2,"c":3},{"a":1,"a":2},{"x":1,"y":2,"z":3,"w":4}]"#.utf8))
        #expect(duplicates == [JSONDuplicateKey(path: "[1].a", line: 1)])
        #expect(value.jsonString == #"[{"a":1,"b":2,"c":3},{"a":2},{"x":1,"y":2,"z":3,"w":4}]"#)
    }
}

@Suite struct JSONValueTests {
    @Test func objectKeepsInsertionOrderAndRemoves() {
        var object = JSONObject()
        object["b"] = 1
        object["a"] = 2
        object["c"] = nil
        object["b"] = 3
        #expect(object.keys == ["b", "a"])
        object["b"] = nil
        #expect(object.keys == ["a"])
        #expect(object.count == 1)
        object["n"] = .null
        #expect(object.contains("n"))
        #expect(!object.contains("b"))
        #expect(Array(object).map(\.key) == ["a", "n"])
    }

    /// Keys compare as Swift strings do (canonical equivalence), in small objects (scanned) as in
    /// large ones (indexed): a decomposed "é" finds a composed one, the Kelvin sign finds "K",
    /// and ASCII keys of every length are told apart.
    @Test(arguments: [3, 40])
    func keysCompareAsStrings(_ size: Int) {
        var object = JSONObject()
        for index in 0..<size { object["field_\(index)"] = .integer(Int64(index)) }
        object["Soci\u{E9}t\u{E9}"] = "composed"
        object["K"] = "ascii"
        object["__locally_created__"] = true
        #expect(object["Socie\u{301}te\u{301}"] == "composed")
        #expect(object["\u{212A}"] == "ascii")
        #expect(object["__locally_created__"] == true)
        #expect(object["__locally_created_"] == nil && object["__locally_updated__"] == nil)
        #expect(object["field_\(size - 1)"] == .integer(Int64(size - 1)))
        var ascii = JSONObject()
        for index in 0..<size { ascii["f\(index)"] = .integer(Int64(index)) }
        ascii["K"] = "ascii"
        #expect(ascii["\u{212A}"] == "ascii")
        #expect(ascii["f0"] == 0 && ascii["f"] == nil && ascii["f00"] == nil)
    }

    /// A body spelling one key two ways (equal as strings, apart as bytes) parses into an object
    /// large enough to be indexed without trapping; either spelling finds the first.
    @Test func aKeySpelledTwoWaysInALargeObject() throws {
        // Three-letter fillers, so the parser does not take the second spelling for a repeat.
        let members = (0..<30).map { "\"f\($0 / 10)\($0 % 10)\": \($0)" } + [#""K": "first""#, #""\u212A": "second""#]
        let value = try JSONParser.parse("{" + members.joined(separator: ",") + "}")
        let object = try #require(value.objectValue)
        #expect(object.count == 32)
        #expect(object["K"] == "first" && object["\u{212A}"] == "first")
        var grown = object
        grown["f00"] = nil
        #expect(grown["K"] == "first")
    }

    @Test func objectEqualityIgnoresOrder() throws {
        #expect(try JSONParser.parse(#"{"a":1,"b":2}"#) == JSONParser.parse(#"{"b":2,"a":1}"#))
        #expect(try JSONParser.parse(#"{"a":1}"#) != JSONParser.parse(#"{"a":1.0}"#))
    }

    @Test(arguments: [
        (JSONValue.bool(true), true), ("true", true), ("TRUE", true), ("True", true), ("1", true), (1, true),
        (2, true), (0.5, true), (false, false), ("false", false), (0, false), (0.0, false), (nil, false),
        ("yes", false), ("", false), ([true], false),
    ] as [(JSONValue, Bool)])
    func truthiness(_ value: JSONValue, _ expected: Bool) {
        #expect(value.isTruthy == expected)
    }

    @Test func valueAtPath() throws {
        let value = try JSONParser.parse(#"{"Account": {"Owner": {"Name": "Ann"}}, "x": 1}"#)
        #expect(value.value(atPath: "Account.Owner.Name") == "Ann")
        #expect(value.value(atPath: "x") == 1)
        #expect(value.value(atPath: "x.y") == nil)
        #expect(value.value(atPath: "Account.Missing") == nil)
    }

    @Test func accessorsAndKinds() {
        #expect(JSONValue.string("s").stringValue == "s")
        #expect(JSONValue.integer(1).stringValue == nil)
        #expect(JSONValue.bool(true).boolValue == true)
        #expect(JSONValue.string("true").boolValue == nil)
        #expect(JSONValue.null.isNull)
        #expect([JSONValue.null, true, 1, 1.5, "s", [], [:]].map(\.kindName)
                == ["null", "boolean", "integer", "number", "string", "array", "object"])
    }

    /// Reading a few members of a wide object steps over the others, whatever they hold.
    @Test func anObjectParsedForSomeKeysKeepsOnlyThose() throws {
        let text = #"{"Id":"001","Skip":{"a":["]}",{"b":"\"}"}],"c":null},"Name":"Acme \"One\"","List":[1,[2,{"x":"}"}]],"#
            + #""Amount":-12.5e3,"Flag":true,"Nothing":null,"Last":"z"}"#
        let object = try JSONParser.parseObject(text, keeping: ["Id", "Name", "Amount", "Flag", "Last", "Missing"])
        #expect(object == ["Id": "001", "Name": "Acme \"One\"", "Amount": -12500.0, "Flag": true, "Last": "z"])
        #expect(object.keys == ["Id", "Name", "Amount", "Flag", "Last"])
        let everything = try JSONParser.parse(text).objectValue
        #expect(try JSONParser.parseObject(text, keeping: Set(everything?.keys ?? [])) == everything)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parseObject(#"{"a":"open"#, keeping: ["b"]) }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parseObject(#"{"a":[1,2"#, keeping: ["b"]) }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parseObject(#"[1]"#, keeping: ["a"]) }
    }

    /// An object's members as byte ranges: each name between its quotes (escapes as written), each
    /// value whole, whatever it holds; anything but one complete object is an error.
    @Test func anObjectsMembersAreFoundAsRanges() throws {
        let text = Array(#" { "Id" : "001", "Skip":{"a":["]}",{"b":"\"}"}]},"a\u0062":-12.5e3 ,"List":[1,[2]],"Flag":true,"N":null } "#.utf8)
        let members = try JSONParser.members(of: text)
        let rendered = members.map { (String(decoding: text[$0.name], as: UTF8.self), String(decoding: text[$0.value], as: UTF8.self)) }
        #expect(rendered.map(\.0) == ["Id", "Skip", #"a\u0062"#, "List", "Flag", "N"])
        #expect(rendered.map(\.1) == [#""001""#, #"{"a":["]}",{"b":"\"}"}]}"#, "-12.5e3", "[1,[2]]", "true", "null"])
        #expect(try JSONParser.members(of: Array("{}".utf8)).isEmpty)
        for bad in [#"[1]"#, #"{"a":"open"#, #"{"a":[1,2"#, #"{"a":1} x"#, #"{"a" 1}"#, #"{a:1}"#, ""] {
            #expect(throws: JSONSyntaxError.self, "\(bad)") { try JSONParser.members(of: Array(bad.utf8)) }
        }
    }

    /// Once every member asked for was found, the rest of the object is not read (the stored
    /// records an org reads from put their system fields first).
    @Test func anObjectParsedForSomeKeysIsLeftOnceAllAreFound() throws {
        let text = #"{"Id":"001","LastModifiedDate":"2026-01-01","Name":"Acme","Tail":[1,2"#
        #expect(try JSONParser.parseObject(text, keeping: ["Id", "LastModifiedDate"]) == ["Id": "001", "LastModifiedDate": "2026-01-01"])
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parseObject(text, keeping: ["Id", "Missing"]) }
        #expect(try JSONParser.parseObject(#"{"a\u0062":1,"c":2,"#, keeping: ["ab"]) == ["ab": 1], "an escaped name found counts")
    }

    /// Bytes in any contiguous collection (SQLite's, as `Data`) parse as their text does, and a
    /// name kept that the document repeats, plain or escaped, stays one member holding the last value.
    @Test func anObjectParsedForSomeKeysFromDataKeepsEachNameOnce() throws {
        let text = #"{"a":1,"b":2,"\u0061":3,"c":4}"#
        let fromData = try JSONParser.parseObject(Data(text.utf8), keeping: ["a", "c"])
        #expect(fromData == ["a": 3, "c": 4])
        #expect(fromData.keys == ["a", "c"])
        #expect(try JSONParser.parseObject(Data((" " + text).utf8).dropFirst(), keeping: ["b"]) == ["b": 2], "a slice of Data")
        #expect(try JSONParser.parseObject(AnyCollection(Array(text.utf8)), keeping: ["b"]) == ["b": 2], "a collection not contiguous")
        let escapedFirst = try JSONParser.parseObject(#"{"\u0061":1,"a":2}"#, keeping: ["a", "z"])
        #expect(escapedFirst.keys == ["a"])
        #expect(escapedFirst == ["a": 2])
        #expect(try JSONParser.parse(Data(text.utf8)).value == JSONParser.parse(text))
        // Names past the first 64 are kept alike: each repeated at once, every one but the last
        // (the object is left once all are found) holds its second value, as one member.
        let names = (0..<70).map { "k\($0)" }
        let wide = "{" + names.map { #""\#($0)":1,"\#($0)":2"# }.joined(separator: ",") + "}"
        let kept = try JSONParser.parseObject(wide, keeping: Set(names))
        #expect(kept.keys == names)
        #expect(names.dropLast().allSatisfy { kept[$0] == 2 })
        #expect(kept["k69"] == 1)
    }

    /// Members are filtered by value as well as by key (the emulator stores records without their nulls).
    @Test func membersAreWrittenWhereTheyPass() throws {
        let object = try #require(JSONParser.parse(#"{"a":null,"b":1,"c":{"d":null},"e":null,"f":"x"}"#).objectValue)
        var bytes: [UInt8] = []
        object.write(into: &bytes) { _, value in !value.isNull }
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"b":1,"c":{"d":null},"f":"x"}"#)
        var none: [UInt8] = []
        object.write(into: &none) { key, _ in key == "z" }
        #expect(String(decoding: none, as: UTF8.self) == "{}")
    }

    /// Two filtered encodings written in one pass are the two written apart, byte for byte.
    @Test func aSubsetWrittenAlongsideIsTheSubsetWrittenAlone() throws {
        let object = try #require(JSONParser.parse(#"{"attributes":{"type":"A"},"Name":"Acme \"One\"","N":1.5,"#
            + #""__local__":true,"List":[1,{"x":null}],"_soupEntryId":3,"Last":"é"}"#).objectValue)
        let include: (String) -> Bool = { $0 != "_soupEntryId" }
        for select in [{ (key: String) in !key.hasPrefix("_") && key != "attributes" }, { _ in false }, { _ in true }] {
            var whole: [UInt8] = []
            var subset: [UInt8] = []
            object.write(into: &whole, including: include, alsoInto: &subset, selecting: select)
            var aloneWhole: [UInt8] = []
            var aloneSubset: [UInt8] = []
            object.write(into: &aloneWhole, including: include)
            object.write(into: &aloneSubset) { include($0) && select($0) }
            #expect(whole == aloneWhole)
            #expect(subset == aloneSubset)
        }
    }
}
