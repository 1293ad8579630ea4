import Connectors
import Foundation
import Formats
import Formulas
import JSON
import SOQL
import Stages

/// The inputs the fuzzers drive (`scripts/fuzz`), each through the product's own entry point:
/// the CSV reader, the XML reader, the SOQL parser (with binds and a print-and-parse round trip),
/// the formula compiler and evaluator,
/// the pipeline loader, the byte-level record copy against the JSON parser, and the emulator's
/// HTTP request handling. The same functions replay the
/// committed corpora in `swift test`, so a finding fixed once stays fixed.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case csv, xml, soql, formula, pipeline, json, emulator

    /// Where a target's committed corpus lives, under the package root.
    public var corpusDirectory: String { "Fuzz/Corpus/\(rawValue)" }

    /// Feeds one input to a target that needs no server. Any input must return; a crash or a
    /// hang is the finding. `scratch` is a folder the target may write its input file to.
    public func run(_ data: Data, scratch: String) {
        switch self {
        case .csv:
            let path = scratch + "/input.csv"
            guard FileManager.default.createFile(atPath: path, contents: data), let reader = try? CSVReader(path: path) else { return }
            for row in reader {
                if case .malformed(let reason, let line, _) = row { precondition(!reason.isEmpty && line >= 1) }
            }
        case .xml:
            let path = scratch + "/input.xml"
            guard FileManager.default.createFile(atPath: path, contents: data) else { return }
            let reader = XMLRecordReader(path: path, recordElement: "Account", sobjectType: "Account",
                                         children: [.init(element: "Contact", within: "Contacts", sobjectType: "Contact", relationship: nil)])
            if (try? reader.validate()) != nil {
                var count = 0
                try? reader.read { _ in count += 1; return true }
            }
        case .soql:
            let text = String(decoding: data, as: UTF8.self)
            let bound = SOQLBinding.bind(text, values: ["NAME": "x' OR Name != 'y"]).text
            if let query = try? SOQL.parseQuery(bound) {
                // What the printer writes, the parser reads back to the same query.
                let printed = query.description
                guard let again = try? SOQL.parseQuery(printed) else { preconditionFailure("printed query does not parse: \(printed)") }
                precondition(again.description == printed, "print → parse → print changed: \(printed) vs \(again.description)")
            }
            _ = try? SOQL.parseCondition(bound)
            _ = SOQLBinding.substitutionsInsideLiterals(text)
        case .formula:
            Self.compileAndEvaluate(String(decoding: data, as: UTF8.self))
        case .pipeline:
            let path = scratch + "/pipeline.json"
            guard FileManager.default.createFile(atPath: path, contents: data) else { return }
            _ = try? PipelineLoader(variables: VariableResolver(variables: ["TOKEN": "t", "NAME": "n"])).load(path: path)
        case .json:
            Self.compareCopyWithParse([UInt8](data))
        case .emulator:
            preconditionFailure("the emulator target runs against a server: use FuzzEmulator")
        }
    }

    /// Records of every kind of value a formula may meet.
    static let formulaRecords: [JSONObject] = [
        [:],
        ["Name": "Acme", "Amount": 12.5, "Count": 3, "Flag": true, "Close": "2024-02-29", "Stamp": "2024-01-31T10:00:00.000+0000",
         "Account": ["Name": "Parent", "Owner": ["Alias": "x"]], "Empty": "", "Nothing": .null, "List": [1, 2]],
        ["Name": "12", "Amount": "abc", "Count": -1e300, "Flag": "maybe", "Close": "31/12/2024", "Account": "text"],
    ]

    /// A formula compiles or is refused with a column inside it; a compiled one evaluates on any
    /// record to a value or an error for that record.
    static func compileAndEvaluate(_ text: String) {
        let formula: Formula
        do throws(FormulaSyntaxError) {
            formula = try Formula(text)
        } catch {
            precondition(error.column >= 1 && error.column <= text.count + 1 && !error.message.isEmpty, "bad error: \(error)")
            return
        }
        for record in formulaRecords {
            _ = try? formula.evaluate(record, now: Date(timeIntervalSince1970: 1_718_454_600)).json
        }
    }

    /// A sync down copies records from a page's bytes (``JSONParser/copyObject(in:at:into:members:)``)
    /// instead of parsing and writing them: a copy must write what parsing and writing give, and
    /// fail only where parsing does; a page's records must be the elements parsing finds.
    static func compareCopyWithParse(_ bytes: [UInt8]) {
        let parsed = try? JSONParser.parse(bytes).value
        // The document's object, without the byte order mark the parser skips and outer spacing.
        let spacing: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, spacing.contains(bytes[start]) { start += 1 }
        var end = bytes.count
        while end > start, spacing.contains(bytes[end - 1]) { end -= 1 }
        guard start < end, bytes[start] == UInt8(ascii: "{") else { return }
        var output: [UInt8] = []
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        do {
            if try JSONParser.copyObject(in: bytes, at: start..<end, into: &output, members: &members) {
                guard let parsed else { preconditionFailure("copied an object that does not parse") }
                var written: [UInt8] = []
                parsed.write(into: &written)
                precondition(output == written, "the copy differs: \(String(decoding: output, as: UTF8.self))")
                precondition(members.map { String(decoding: output[$0.name], as: UTF8.self) } == parsed.objectValue?.keys)
                // Each member's value reads back as the value parsed (index columns are read so).
                for member in members {
                    let name = String(decoding: output[member.name], as: UTF8.self)
                    guard let value = try? JSONParser.parseValue(in: output, at: member.value), let original = parsed[name],
                          identical(value, original) else { preconditionFailure("\(name) does not read back as parsed") }
                }
            }
        } catch {
            precondition(parsed == nil, "the copy failed on an object that parses: \(error)")
        }
        // A page whose names repeat is parsed, not read this way.
        guard let (names, elements) = try? JSONParser.members(of: bytes, elementsOf: "records"),
              Set(names.map { Array(bytes[$0.name]) }).count == names.count else { return }
        if let records = parsed?["records"]?.arrayValue, let elements {
            precondition(elements.count == records.count, "the page's records were miscounted")
            for (range, record) in zip(elements, records) {
                precondition((try? JSONParser.parseValue(in: bytes, at: range)) == record, "a record's range is wrong")
            }
        }
    }

    /// Equal, doubles to the bit (`-0.0` is not `0.0`).
    static func identical(_ first: JSONValue, _ second: JSONValue) -> Bool {
        switch (first, second) {
        case (.double(let one), .double(let other)): return one.bitPattern == other.bitPattern
        case (.array(let one), .array(let other)): return one.count == other.count && zip(one, other).allSatisfy(identical)
        case (.object(let one), .object(let other)):
            return one.keys == other.keys && one.keys.allSatisfy { key in identical(one[key]!, other[key]!) }
        default: return first == second
        }
    }

    /// A fresh scratch folder for this process.
    public static func makeScratch() -> String {
        let path = NSTemporaryDirectory() + "fuzz-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
